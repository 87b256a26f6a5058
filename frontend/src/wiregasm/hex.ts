// The hex pane: rows of 16 bytes with offsets and ASCII, as Wireshark's byte view shows them.

export interface HexRow {
  readonly offset: number;
  readonly hex: readonly string[];
  readonly ascii: string;
}

export function hexRows(bytes: Uint8Array): HexRow[] {
  const rows: HexRow[] = [];
  for (let offset = 0; offset < bytes.length; offset += 16) {
    const chunk = bytes.subarray(offset, offset + 16);
    const hex = Array.from(chunk, (b) => b.toString(16).padStart(2, "0"));
    const ascii = Array.from(chunk, (b) =>
      b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".",
    ).join("");
    rows.push({ offset, hex, ascii });
  }
  return rows;
}

export function formatOffset(offset: number): string {
  return offset.toString(16).padStart(4, "0");
}

/** Wireshark's colouring-rule colours arrive as 0xRRGGBB integers. */
export function cssColor(rgb: number): string {
  return `#${(rgb & 0xffffff).toString(16).padStart(6, "0")}`;
}
