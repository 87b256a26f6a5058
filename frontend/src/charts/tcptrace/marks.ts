// The event marks of a tcptrace time-sequence graph: which rows carry which mark, where it sits and
// what it means in words. The meanings follow Wireshark's tcp.analysis expert info (epan/dissectors/
// packet-tcp.c) and tcptrace's graph conventions (trace.c: "R" retransmits red, SACKs purple,
// duplicate ACK ticks, SYN/FIN/RST labels).

import type { DirectionSeries } from "../series/columns";
import { TCP_FIN, TCP_RST, TCP_SYN } from "../series/events";

export type MarkKind =
  | "retransmission"
  | "window_full"
  | "zero_window"
  | "zero_window_probe"
  | "duplicate_ack"
  | "out_of_order"
  | "lost_segment"
  | "syn"
  | "fin"
  | "rst";

/** Which series a mark comes from: the data sender's or the receiver's (ACK) packets. */
export type MarkSide = "data" | "ack";

export interface Mark {
  readonly kind: MarkKind;
  readonly side: MarkSide;
  /** Row in its side's series. */
  readonly row: number;
  readonly time: number;
  /** Where on the sequence axis the mark sits. */
  readonly seq: number;
  readonly frame: number;
}

export interface MarkStyle {
  readonly label: string;
  readonly color: string;
  readonly meaning: string;
}

// Colours: tcptrace's, as the theme's --chart-* (styles/theme.css) so each stays ≥ 3:1 against the
// graph's background in the light and the dark theme (its white data bars are Wireshark's blue).
export const MARK_STYLES: Readonly<Record<MarkKind, MarkStyle>> = {
  retransmission: {
    label: "Retransmission",
    color: "var(--chart-retransmission)",
    meaning:
      "red dot on a red bar: the sender sent these bytes again (a segment was lost or thought lost)",
  },
  window_full: {
    label: "Window full",
    color: "var(--chart-window-full)",
    meaning:
      "orange diamond: this segment filled the receiver's advertised window — the sender had to stop and wait",
  },
  zero_window: {
    label: "Zero window",
    color: "var(--chart-zero-window)",
    meaning:
      "crimson triangle: the receiver advertised a zero window — its buffer is full, sending stops",
  },
  zero_window_probe: {
    label: "Zero-window probe",
    color: "var(--chart-zero-window-probe)",
    meaning: "violet circle: the sender probes whether the receiver's window has opened again",
  },
  duplicate_ack: {
    label: "Duplicate ACK",
    color: "var(--chart-duplicate-ack)",
    meaning:
      "violet tick: the receiver repeated its ACK — data after a gap arrived (loss or reordering)",
  },
  out_of_order: {
    label: "Out of order",
    color: "var(--chart-out-of-order)",
    meaning: "pink square: this segment arrived with a lower sequence number than one seen before",
  },
  lost_segment: {
    label: "Previous segment not captured",
    color: "var(--chart-lost-segment)",
    meaning:
      "grey cross: a sequence gap before this segment — the capture missed it or it was lost upstream",
  },
  syn: {
    label: "SYN",
    color: "var(--chart-syn-fin)",
    meaning: "SYN: the sender opens the connection",
  },
  fin: {
    label: "FIN",
    color: "var(--chart-syn-fin)",
    meaning: "FIN: the sender has no more data to send",
  },
  rst: {
    label: "RST",
    color: "var(--chart-rst)",
    meaning: "RST: the connection was reset (aborted)",
  },
};

const DATA_EVENT_KINDS = [
  "retransmission",
  "window_full",
  "zero_window_probe",
  "out_of_order",
  "lost_segment",
] as const;
// Window updates are not drawn: Wireshark flags every ACK that only opens the window (thousands in a
// healthy download) and tcptrace does not mark them; the rising window line already shows them.
const ACK_EVENT_KINDS = ["zero_window", "duplicate_ack"] as const;

/**
 * Every mark of one direction's time-sequence graph. `data` is the direction being graphed, `acks`
 * the reverse direction (its ACKs, windows and SACKs describe the receiver of `data`).
 */
export function tcptraceMarks(data: DirectionSeries, acks: DirectionSeries): Mark[] {
  const marks: Mark[] = [];
  const dataEvents = DATA_EVENT_KINDS.reduce((mask, kind) => mask | data.eventBits[kind], 0);
  const { retransmission, out_of_order: outOfOrder } = data.eventBits;
  for (let i = 0; i < data.length; i++) {
    // Retransmission marks follow `resent` (every re-sent segment, the count the flow and the
    // findings give), not Wireshark's flag; a re-sent segment Wireshark calls out-of-order is
    // marked once, as the retransmission it is.
    const events =
      data.resent[i] === 1
        ? ((data.events[i] as number) & dataEvents & ~outOfOrder) | retransmission
        : (data.events[i] as number) & dataEvents & ~retransmission;
    const flags = (data.flags[i] as number) & (TCP_SYN | TCP_FIN | TCP_RST);
    if (events === 0 && flags === 0) continue; // most rows: nothing to mark, nothing allocated
    const seq = data.seq[i] as number;
    const base = {
      side: "data" as const,
      row: i,
      time: data.time[i] as number,
      frame: data.frame[i] as number,
    };
    if (events !== 0) {
      for (const kind of DATA_EVENT_KINDS) {
        if (events & data.eventBits[kind]) {
          // A retransmission is drawn by colouring its bar; the mark sits at the bar's top.
          marks.push({ ...base, kind, seq: seq + (data.payloadLen[i] as number) });
        }
      }
    }
    if (flags & TCP_SYN) marks.push({ ...base, kind: "syn", seq });
    if (flags & TCP_FIN) marks.push({ ...base, kind: "fin", seq });
    if (flags & TCP_RST) marks.push({ ...base, kind: "rst", seq });
  }
  const ackEvents = ACK_EVENT_KINDS.reduce((mask, kind) => mask | acks.eventBits[kind], 0);
  for (let i = 0; i < acks.length; i++) {
    const events = (acks.events[i] as number) & ackEvents;
    const reset = ((acks.flags[i] as number) & TCP_RST) !== 0;
    if (events === 0 && !reset) continue;
    const base = {
      side: "ack" as const,
      row: i,
      time: acks.time[i] as number,
      frame: acks.frame[i] as number,
    };
    for (const kind of ACK_EVENT_KINDS) {
      if (events & acks.eventBits[kind]) marks.push({ ...base, kind, seq: acks.ack[i] as number });
    }
    if (reset) marks.push({ ...base, kind: "rst", seq: acks.ack[i] as number });
  }
  marks.sort((a, b) => a.time - b.time);
  return marks;
}

export function countMarks(marks: readonly Mark[]): Record<MarkKind, number> {
  const counts = Object.fromEntries(Object.keys(MARK_STYLES).map((k) => [k, 0])) as Record<
    MarkKind,
    number
  >;
  for (const mark of marks) counts[mark.kind]++;
  return counts;
}

/** Data attribute names for the counts (`data-window-full-count`), read by the browser tests. */
export function markCountAttributes(counts: Record<MarkKind, number>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [kind, n] of Object.entries(counts)) {
    out[`data-${kind.replaceAll("_", "-")}-count`] = String(n);
  }
  return out;
}
