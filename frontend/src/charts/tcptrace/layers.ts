// The canvas layers of the tcptrace time-sequence graph, back to front: receive-window edge,
// ACK line, SACK blocks, data segments, retransmitted segments. Colours and shapes follow tcptrace
// (green ACK step, yellow window step — olive in the light theme to stay readable on white —,
// purple SACKs, red retransmissions) with Wireshark's blue for the data bars; the colours are the
// theme's (--chart-* in styles/theme.css, resolved by frame/palette.ts).

import { strokeBars, strokeSteps } from "../frame/draw";
import type { CanvasLayer, PlotArea } from "../frame/types";
import { barColumns } from "../lod/bars";
import { m4Columns } from "../lod/m4";
import { lowerBound, upperBound, visibleRange } from "../lod/visibleRange";
import type { DirectionSeries } from "../series/columns";
import { TCP_ACK } from "../series/events";
import { SACK_TICK_PX, type SackBlock, sackBars } from "./sack";

export const TCPTRACE_COLORS = {
  data: "var(--chart-data)",
  retransmission: "var(--chart-retransmission)",
  ack: "var(--chart-ack)",
  window: "var(--chart-window)",
  sack: "var(--chart-sack)",
} as const;

function inView(series: DirectionSeries, area: PlotArea) {
  const [from, to] = area.x.domain() as [number, number];
  return visibleRange(series.time, from, to);
}

/** ack + advertised window: the highest sequence number the receiver allows the sender to send. */
export function windowEdge(acks: DirectionSeries): Float64Array {
  const edge = new Float64Array(acks.length);
  for (let i = 0; i < acks.length; i++) {
    const hasAck = ((acks.flags[i] as number) & TCP_ACK) !== 0;
    edge[i] = hasAck ? (acks.ack[i] as number) + (acks.window[i] as number) : Number.NaN;
  }
  return edge;
}

/** The ACK column with non-ACK packets (a bare SYN) as gaps. */
export function ackLine(acks: DirectionSeries): Float64Array {
  const out = new Float64Array(acks.length);
  for (let i = 0; i < acks.length; i++) {
    out[i] = ((acks.flags[i] as number) & TCP_ACK) !== 0 ? (acks.ack[i] as number) : Number.NaN;
  }
  return out;
}

function stepLayer(
  id: string,
  series: DirectionSeries,
  values: Float64Array,
  color: string,
  width: number,
): CanvasLayer {
  return {
    id,
    draw(ctx, area) {
      const { lo, hi } = inView(series, area);
      const columns = m4Columns(series.time, values, lo, hi, area.x, area.width);
      const last = series.time[series.length - 1];
      ctx.strokeStyle = color;
      ctx.lineWidth = width;
      ctx.lineJoin = "round";
      strokeSteps(
        ctx,
        columns,
        area.y,
        last === undefined ? 0 : Math.min(area.width, area.x(last)),
      );
    },
  };
}

export function receiveWindowLayer(acks: DirectionSeries, edge: Float64Array): CanvasLayer {
  return stepLayer("receive-window", acks, edge, TCPTRACE_COLORS.window, 1.5);
}

export function ackLayer(acks: DirectionSeries, line: Float64Array): CanvasLayer {
  return stepLayer("ack", acks, line, TCPTRACE_COLORS.ack, 1.5);
}

/** Every SACK block of the view (`blocks` in time order, `times` their times). */
export function sackLayer(blocks: readonly SackBlock[], times: Float64Array): CanvasLayer {
  return {
    id: "sack",
    draw(ctx, area) {
      const [from, to] = area.x.domain() as [number, number];
      const visible = blocks.slice(lowerBound(times, from), upperBound(times, to));
      ctx.strokeStyle = TCPTRACE_COLORS.sack;
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      for (const bar of sackBars(visible, area)) {
        ctx.moveTo(bar.x, bar.bottom);
        ctx.lineTo(bar.x, bar.top);
        ctx.moveTo(bar.x - SACK_TICK_PX, bar.top);
        ctx.lineTo(bar.x + SACK_TICK_PX, bar.top);
        ctx.moveTo(bar.x - SACK_TICK_PX, bar.bottom);
        ctx.lineTo(bar.x + SACK_TICK_PX, bar.bottom);
      }
      ctx.stroke();
    },
  };
}

/** Data segments as vertical bars from seq to seq + len; retransmissions drawn after, in red. */
export function segmentsLayer(data: DirectionSeries): CanvasLayer {
  const isRetransmission = (i: number) => data.resent[i] === 1;
  const isOriginal = (i: number) => !isRetransmission(i);
  return {
    id: "segments",
    draw(ctx, area) {
      const { lo, hi } = inView(data, area);
      // End ticks only when bars are far enough apart to read them.
      const perPixel = (hi - lo) / Math.max(1, area.width);
      const tick = perPixel < 0.25 ? 3 : 0;
      ctx.lineWidth = 1.25;
      ctx.strokeStyle = TCPTRACE_COLORS.data;
      const original = barColumns(
        data.time,
        data.seq,
        data.payloadLen,
        lo,
        hi,
        area.x,
        area.width,
        isOriginal,
      );
      strokeBars(ctx, original, area.y, tick);
      ctx.lineWidth = 2;
      ctx.strokeStyle = TCPTRACE_COLORS.retransmission;
      const again = barColumns(
        data.time,
        data.seq,
        data.payloadLen,
        lo,
        hi,
        area.x,
        area.width,
        isRetransmission,
      );
      strokeBars(ctx, again, area.y, tick + 1);
    },
  };
}

/** Lowest and highest sequence number drawn in the window (segments, ACKs, window edge). */
export function sequenceExtent(
  data: DirectionSeries,
  acks: DirectionSeries,
  edge: Float64Array,
  from: number,
  to: number,
): [number, number] {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  const d = visibleRange(data.time, from, to);
  for (let i = d.lo; i < d.hi; i++) {
    const s = data.seq[i] as number;
    if (!Number.isFinite(s)) continue;
    if (s < low) low = s;
    const end = s + Math.max(0, data.payloadLen[i] as number);
    if (end > high) high = end;
  }
  const a = visibleRange(acks.time, from, to);
  for (let i = a.lo; i < a.hi; i++) {
    if (((acks.flags[i] as number) & TCP_ACK) === 0) continue;
    const ack = acks.ack[i] as number;
    if (Number.isFinite(ack)) {
      if (ack < low) low = ack;
      if (ack > high) high = ack;
    }
    const e = edge[i] as number;
    if (Number.isFinite(e) && e > high) high = e;
  }
  if (!Number.isFinite(low)) return [0, 1];
  const pad = Math.max(1, (high - low) * 0.04);
  return [Math.max(0, low - pad), high + pad];
}
