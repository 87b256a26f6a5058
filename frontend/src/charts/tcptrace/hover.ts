// What the pointer is over on the time-sequence graph, in words: a mark first (they are the
// evidence), then a data segment, then the ACK / window lines.

import { closest, PICK_RADIUS_PX } from "../frame/nearest";
import type { HoverItem, PlotArea } from "../frame/types";
import { lowerBound, visibleRange } from "../lod/visibleRange";
import { formatBytesExact } from "../numbers";
import type { DirectionSeries } from "../series/columns";
import { TCPTRACE_COLORS } from "./layers";
import { MARK_STYLES, type Mark } from "./marks";
import { type SackBar, type SackBlock, sackBars } from "./sack";

function timeLine(t: number, frame: number): string {
  return `t = ${t.toFixed(6)} s · frame ${frame}`;
}

export function markItem(m: Mark): HoverItem {
  const style = MARK_STYLES[m.kind];
  return {
    time: m.time,
    value: m.seq,
    color: style.color,
    title: style.label,
    lines: [style.meaning, timeLine(m.time, m.frame)],
    frame: m.frame,
  };
}

export const SACK_MEANING =
  "purple bar: bytes the receiver already holds above a gap, so the sender need not resend them (SACK, RFC 2018)";

export function tcptraceHover(
  area: PlotArea,
  px: number,
  py: number,
  visibleMarks: readonly Mark[],
  visibleSacks: readonly SackBlock[],
  data: DirectionSeries,
  acks: DirectionSeries,
  ackValues: Float64Array,
  edge: Float64Array,
): HoverItem | null {
  const mark = closest(
    visibleMarks.map((m) => ({ px: area.x(m.time), py: area.y(m.seq), item: m })),
    px,
    py,
  );
  if (mark) return markItem(mark);

  let sack: SackBar | null = null;
  for (const bar of sackBars(visibleSacks, area)) {
    const dx = Math.abs(bar.x - px);
    if (dx > PICK_RADIUS_PX || py < bar.top - PICK_RADIUS_PX || py > bar.bottom + PICK_RADIUS_PX)
      continue;
    if (!sack || dx < Math.abs(sack.x - px)) sack = bar;
  }
  if (sack) {
    const { block } = sack;
    return {
      time: block.time,
      value: block.right,
      color: TCPTRACE_COLORS.sack,
      title: `SACK block ${block.index + 1}`,
      lines: [
        SACK_MEANING,
        `seq ${block.left.toLocaleString("en-US")} → ${block.right.toLocaleString("en-US")} (${formatBytesExact(block.right - block.left)})`,
        timeLine(block.time, block.frame),
      ],
      frame: block.frame,
    };
  }

  const t0 = area.x.invert(px - PICK_RADIUS_PX);
  const t1 = area.x.invert(px + PICK_RADIUS_PX);
  const { lo, hi } = visibleRange(data.time, t0, t1);
  let best = -1;
  let bestDx = PICK_RADIUS_PX + 1;
  for (let i = lo; i < hi; i++) {
    const len = data.payloadLen[i] as number;
    if (!(len > 0)) continue;
    const top = area.y((data.seq[i] as number) + len);
    const bottom = area.y(data.seq[i] as number);
    if (py < top - PICK_RADIUS_PX || py > bottom + PICK_RADIUS_PX) continue;
    const dx = Math.abs(area.x(data.time[i] as number) - px);
    if (dx < bestDx) {
      bestDx = dx;
      best = i;
    }
  }
  if (best >= 0) {
    const seq = data.seq[best] as number;
    const len = data.payloadLen[best] as number;
    const again = data.resent[best] === 1;
    return {
      time: data.time[best] as number,
      value: seq + len,
      color: again ? TCPTRACE_COLORS.retransmission : TCPTRACE_COLORS.data,
      title: again ? "Retransmitted segment" : "Data segment",
      lines: [
        again
          ? "red bar: these bytes were sent before — the sender is repeating them"
          : "blue bar: bytes the sender put on the wire (from seq to seq + len)",
        `seq ${seq.toLocaleString("en-US")} → ${(seq + len).toLocaleString("en-US")} (${formatBytesExact(len)})`,
        timeLine(data.time[best] as number, data.frame[best] as number),
      ],
      frame: data.frame[best] as number,
    };
  }

  // The ACK and window lines are steps: the value at the pointer's time is the last row before it.
  const t = area.x.invert(px);
  const row = lowerBound(acks.time, t) - 1;
  if (row < 0) return null;
  let i = row;
  while (i >= 0 && !Number.isFinite(ackValues[i] as number)) i--;
  if (i < 0) return null;
  const ack = ackValues[i] as number;
  const edgeValue = edge[i] as number;
  const yAck = area.y(ack);
  const yEdge = area.y(edgeValue);
  const window = acks.window[i] as number;
  if (Math.abs(py - yAck) <= PICK_RADIUS_PX) {
    return {
      time: t,
      value: ack,
      color: TCPTRACE_COLORS.ack,
      title: "ACK line",
      lines: [
        "green step: data acknowledged by the receiver (everything below the line has arrived)",
        `ack ${ack.toLocaleString("en-US")} · window ${formatBytesExact(window)}`,
        timeLine(acks.time[i] as number, acks.frame[i] as number),
      ],
      frame: acks.frame[i] as number,
    };
  }
  if (Number.isFinite(edgeValue) && Math.abs(py - yEdge) <= PICK_RADIUS_PX) {
    return {
      time: t,
      value: edgeValue,
      color: TCPTRACE_COLORS.window,
      title: "Receive window",
      lines: [
        "yellow step: ack + advertised window — the sender may not send above this line",
        `edge ${edgeValue.toLocaleString("en-US")} = ack ${ack.toLocaleString("en-US")} + ${formatBytesExact(window)}`,
        timeLine(acks.time[i] as number, acks.frame[i] as number),
      ],
      frame: acks.frame[i] as number,
    };
  }
  return null;
}
