// One flow's packets in the Wiregasm worker: the API's slice of the capture (…/flows/{id}/packets),
// which holds only the flow's frames, numbered 1..n by Wireshark. The user sees the capture's own
// frame numbers everywhere (the graphs, the URL, the analysis name them): frame k of the slice is
// the capture's frame `frames[k - 1]` (…/flows/{id}/frames), and every number Wireshark shows
// that names a frame (the "No." column, "Frame N:", references such as "ACK to the segment in
// frame: N", "Dup ACK N#k") is translated back. Times likewise: Wireshark counts them from the
// slice's first frame, the page from the capture's start (the graphs' axis), `startS` earlier.

import type { WiregasmClient } from "./client";
import type { FrameDetails, FrameRow, FramesPage, TreeNode } from "./protocol";

/** Fields whose value is a frame number (Wireshark's FT_FRAMENUM fields these dissections show). */
const FRAME_FIELDS = new Set([
  "frame.number",
  "tcp.analysis.acks_frame",
  "tcp.analysis.duplicate_ack_frame",
  "tcp.reassembled_in",
  "tcp.segment",
  "tls.handshake.reassembled_in",
  "http.request_in",
  "http.response_in",
  "http.prev_request_in",
  "http.prev_response_in",
  "http.next_request_in",
  "http.next_response_in",
]);

/** The capture's frame number of slice frame `slice` (1-based); the slice number if unknown. */
export function originalFrame(frames: readonly number[], slice: number): number {
  return frames[slice - 1] ?? slice;
}

/** The slice's frame number (1-based) of the capture's frame `original`, or null if absent. */
export function sliceFrame(frames: readonly number[], original: number): number | null {
  let lo = 0;
  let hi = frames.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((frames[mid] as number) < original) lo = mid + 1;
    else hi = mid;
  }
  return frames[lo] === original ? lo + 1 : null;
}

/** `text` with the whole number `slice` replaced by its original frame number (first time). */
function replaceNumber(text: string, slice: number, frames: readonly number[]): string {
  return text.replace(new RegExp(`\\b${slice}\\b`), String(originalFrame(frames, slice)));
}

/** "12.000345" (seconds, any number of decimals) plus `offsetS`, with as many decimals. */
export function shiftSeconds(text: string, offsetS: number): string {
  const match = /^(-?)(\d+)\.(\d+)$/.exec(text);
  if (!match || !offsetS) return text;
  const decimals = (match[3] as string).length;
  const unit = 10 ** decimals;
  const units =
    (match[1] ? -1 : 1) * (Number(match[2]) * unit + Number(match[3])) + Math.round(offsetS * unit);
  const sign = units < 0 ? "-" : "";
  const whole = Math.floor(Math.abs(units) / unit);
  const part = String(Math.abs(units) % unit).padStart(decimals, "0");
  return `${sign}${whole}.${part}`;
}

export function renumberRow(
  row: FrameRow,
  columns: readonly string[],
  frames: readonly number[],
  startS = 0,
): FrameRow {
  const number = originalFrame(frames, row.number);
  return {
    ...row,
    number,
    columns: row.columns.map((text, k) => {
      if (columns[k] === "No.") return String(number);
      if (columns[k] === "Time") return shiftSeconds(text, startS);
      // "[TCP Dup ACK 12#3]": the frame of the ACK it duplicates
      return text.replace(
        /Dup ACK (\d+)#/g,
        (_, n: string) => `Dup ACK ${originalFrame(frames, Number(n))}#`,
      );
    }),
  };
}

export function renumberTree(
  nodes: readonly TreeNode[],
  frames: readonly number[],
  startS = 0,
): TreeNode[] {
  return nodes.map((node) => {
    let label = node.label;
    let filter = node.filter;
    const match = /^([\w.]+) == (\S+)$/.exec(node.filter);
    if (match?.[1] === "frame.time_relative") {
      const shifted = shiftSeconds(match[2] as string, startS);
      label = label.replace(match[2] as string, shifted);
      filter = `${match[1]} == ${shifted}`;
    } else if (match && FRAME_FIELDS.has(match[1] as string) && /^\d+$/.test(match[2] as string)) {
      const slice = Number(match[2]);
      label = replaceNumber(label, slice, frames);
      filter = `${match[1]} == ${originalFrame(frames, slice)}`;
    } else {
      const frame = /^Frame (\d+):/.exec(label); // the top node ("Frame 7: 74 bytes on wire…")
      if (frame) label = replaceNumber(label, Number(frame[1]), frames);
    }
    return { ...node, label, filter, children: renumberTree(node.children, frames, startS) };
  });
}

export class FlowPackets {
  constructor(
    private readonly client: WiregasmClient,
    /** The capture's frame numbers of the slice's frames, ascending. */
    readonly frames: readonly number[],
    /** How many packets the flow has (more than `frames.length` when the slice is cut short). */
    readonly total: number,
    private readonly columns: readonly string[],
    /** Seconds from the capture's start to the slice's first frame. */
    private readonly startS: number,
  ) {}

  get truncated(): boolean {
    return this.frames.length < this.total;
  }

  /** The row index of the capture's frame `original` in the list, or null if not loaded. */
  indexOf(original: number): number | null {
    const slice = sliceFrame(this.frames, original);
    return slice === null ? null : slice - 1;
  }

  async rows(skip: number, limit: number): Promise<FramesPage> {
    const page = await this.client.frames("", skip, limit);
    return {
      matched: page.matched,
      rows: page.rows.map((row) => renumberRow(row, this.columns, this.frames, this.startS)),
    };
  }

  /** The dissection of the capture's frame `original`, or null if it is not in the slice. */
  async frame(original: number): Promise<FrameDetails | null> {
    const slice = sliceFrame(this.frames, original);
    if (slice === null) return null;
    const details = await this.client.frame(slice);
    return {
      ...details,
      number: original,
      tree: renumberTree(details.tree, this.frames, this.startS),
    };
  }
}
