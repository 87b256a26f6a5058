import { useMemo } from "react";
import { formatOffset, hexRows } from "./hex";

/** Bytes of the frame, the selected field's bytes highlighted (Wireshark's packet bytes pane). */
export function HexView(props: {
  bytes: Uint8Array;
  highlight: { start: number; length: number } | null;
}) {
  const rows = useMemo(() => hexRows(props.bytes), [props.bytes]);
  const h = props.highlight;
  const on = (i: number) => h !== null && h.length > 0 && i >= h.start && i < h.start + h.length;
  return (
    <pre className="hex-view" data-testid="packet-bytes">
      {rows.map((row) => (
        <div key={row.offset}>
          <span className="hex-offset">{formatOffset(row.offset)}</span>
          {"  "}
          {row.hex.map((b, k) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: byte positions are the identity here
            <span key={k} className={on(row.offset + k) ? "hex-on" : undefined}>
              {b}
              {k === 7 ? "  " : " "}
            </span>
          ))}
          {"   ".repeat(16 - row.hex.length)}
          {"  "}
          <span className="hex-ascii">
            {Array.from(row.ascii).map((c, k) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: byte positions are the identity here
              <span key={k} className={on(row.offset + k) ? "hex-on" : undefined}>
                {c}
              </span>
            ))}
          </span>
        </div>
      ))}
    </pre>
  );
}
