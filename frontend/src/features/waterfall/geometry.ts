// Pure geometry of the connection waterfall (like a browser's network panel): one row per TCP
// connection on the capture's time axis, split into DNS, handshake, transfer and idle segments.
// d3 computes the scale; React (Waterfall.tsx) only renders the rectangles computed here.

import { scaleLinear } from "d3-scale";

export type SegmentKind = "dns" | "handshake" | "transfer" | "idle";

/** One connection's timeline, in seconds from the capture's first packet. */
export interface ConnectionTimeline {
  flowId: number;
  label: string;
  startS: number;
  endS: number;
  /** The DNS lookup that preceded the SYN, if one was seen. */
  dnsS?: readonly [number, number] | undefined;
  /** SYN → the client's ACK of the SYN/ACK (or SYN → SYN/ACK when that is all we know). */
  handshakeS?: readonly [number, number] | undefined;
  /**
   * First → last packet carrying payload: transfer is drawn only inside it. `null`: the flow
   * carried no data (no transfer segment); `undefined`: unknown, so all after the handshake.
   */
  dataS?: readonly [number, number] | null | undefined;
  /** Intervals without any packet of the flow (tcp.model.IdleGaps). */
  idleS?: readonly (readonly [number, number])[] | undefined;
}

export interface Segment {
  kind: SegmentKind;
  startS: number;
  endS: number;
  x: number;
  width: number;
}

export interface WaterfallRow {
  flowId: number;
  label: string;
  y: number;
  segments: Segment[];
}

export interface WaterfallLayout {
  rows: WaterfallRow[];
  ticks: { x: number; label: string }[];
  width: number;
  height: number;
}

export interface LayoutOptions {
  /** Width of the plotting area in pixels (the label column is outside it). */
  width: number;
  rowHeight: number;
  /** The capture's duration: the axis always spans [0, durationS]. */
  durationS: number;
  /** Narrower segments are widened to this so a 1 ms handshake stays visible. */
  minSegmentPx?: number;
}

/**
 * Split one connection into consecutive segments: DNS (before the SYN), handshake, then the rest
 * of the connection as transfer interrupted by idle gaps. Ranges are clipped to the connection
 * (DNS to the time before it) and never overlap.
 */
export function connectionSegments(
  timeline: ConnectionTimeline,
): { kind: SegmentKind; startS: number; endS: number }[] {
  const { startS, endS } = timeline;
  const out: { kind: SegmentKind; startS: number; endS: number }[] = [];
  if (timeline.dnsS) {
    const dnsEnd = Math.min(timeline.dnsS[1], startS);
    if (dnsEnd > timeline.dnsS[0])
      out.push({ kind: "dns", startS: timeline.dnsS[0], endS: dnsEnd });
  }
  let cursor = startS;
  if (timeline.handshakeS) {
    const hsStart = Math.max(timeline.handshakeS[0], startS);
    const hsEnd = Math.min(timeline.handshakeS[1], endS);
    if (hsEnd > hsStart) {
      out.push({ kind: "handshake", startS: hsStart, endS: hsEnd });
      cursor = hsEnd;
    }
  }
  // Transfer is the data range minus the idle gaps; outside it (e.g. the FIN exchange after the
  // last data) nothing is drawn.
  const data = timeline.dataS;
  const dataStart = data === undefined ? startS : data === null ? endS : data[0];
  const dataEnd = data === undefined ? endS : data === null ? startS : data[1];
  const pushTransfer = (a: number, b: number) => {
    const from = Math.max(a, dataStart);
    const to = Math.min(b, dataEnd);
    if (to > from) out.push({ kind: "transfer", startS: from, endS: to });
  };
  const idle = [...(timeline.idleS ?? [])]
    .map(([a, b]) => [Math.max(a, cursor), Math.min(b, endS)] as const)
    .filter(([a, b]) => b > a)
    .sort((p, q) => p[0] - q[0]);
  for (const [a, b] of idle) {
    if (a < cursor) continue; // overlapping gaps: keep the first
    pushTransfer(cursor, a);
    out.push({ kind: "idle", startS: a, endS: b });
    cursor = b;
  }
  pushTransfer(cursor, endS);
  return out;
}

/** Lay out every connection on one shared time axis. */
export function layoutWaterfall(
  timelines: readonly ConnectionTimeline[],
  options: LayoutOptions,
): WaterfallLayout {
  const { width, rowHeight } = options;
  const minPx = options.minSegmentPx ?? 1;
  const durationS = Math.max(options.durationS, ...timelines.map((t) => t.endS), 1e-6);
  const firstS = Math.min(0, ...timelines.map((t) => t.dnsS?.[0] ?? t.startS));
  const x = scaleLinear().domain([firstS, durationS]).range([0, width]);

  const rows = timelines.map((timeline, index) => ({
    flowId: timeline.flowId,
    label: timeline.label,
    y: index * rowHeight,
    segments: connectionSegments(timeline).map((s) => {
      const x0 = x(s.startS);
      const w = Math.max(x(s.endS) - x0, minPx);
      // A widened segment must not run past the axis end.
      return { ...s, x: Math.min(x0, width - w), width: w };
    }),
  }));

  const ticks = x.ticks(Math.max(2, Math.floor(width / 90))).map((t) => ({
    x: x(t),
    label: formatSeconds(t),
  }));
  return { rows, ticks, width, height: timelines.length * rowHeight };
}

/** "0", "250 ms", "1.5 s", "2 min 5 s" — the units engineers read on a network panel. */
export function formatSeconds(s: number): string {
  if (s === 0) return "0";
  const abs = Math.abs(s);
  if (abs < 1) return `${trim(s * 1000)} ms`;
  if (abs < 120) return `${trim(s)} s`;
  const minutes = Math.floor(abs / 60);
  return `${s < 0 ? "-" : ""}${minutes} min ${Math.round(abs - minutes * 60)} s`;
}

function trim(value: number): string {
  return Number.parseFloat(value.toPrecision(3)).toString();
}
