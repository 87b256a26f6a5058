// Throughput and goodput over time, in bins. Both are read from cumulative quantities (bytes sent so
// far, highest ACK so far) so the result is exact even on a level-of-detail reduced series: the
// reduction keeps each bucket's extremes, and a running maximum only needs those.
//
// throughput: payload bytes the sender put on the wire per second, retransmissions included
//             (tcptrace's "throughput" graph counts every segment).
// goodput:    bytes the receiver acknowledged per second (the ACK line's slope): what the
//             application actually got across.

import type { DirectionSeries } from "../series/columns";

/** A "nice" bin width (1, 2 or 5 × 10^k s) giving about `targetBins` bins over `span`. */
export function niceBinWidth(span: number, targetBins: number): number {
  const raw = span / Math.max(1, targetBins);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const m = raw / power;
  const nice = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
  return nice * power;
}

export interface Bins {
  readonly start: Float64Array;
  readonly width: number;
  /** Bytes per second in each bin; NaN where nothing is known. */
  readonly rate: Float64Array;
}

/**
 * Per bin of `width` seconds aligned on multiples of `width` covering [from, to]: the advance of the
 * running maximum of `cumulative` during the bin, divided by the width.
 */
export function advanceRate(
  time: Float64Array,
  cumulative: Float64Array,
  from: number,
  to: number,
  width: number,
): Bins {
  const first = Math.floor(from / width);
  const n = Math.max(1, Math.ceil(to / width) - first);
  const start = new Float64Array(n);
  const rate = new Float64Array(n);
  const levelAtEnd = new Float64Array(n).fill(Number.NaN);
  let running = Number.NEGATIVE_INFINITY;
  let before = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < time.length; i++) {
    const v = cumulative[i] as number;
    if (!Number.isFinite(v)) continue;
    const bin = Math.floor((time[i] as number) / width) - first;
    if (bin >= 0 && before === Number.NEGATIVE_INFINITY) before = v; // no earlier row: start here
    if (v > running) running = v;
    if (bin < 0) before = running;
    else if (bin < n) levelAtEnd[bin] = running;
    else break;
  }
  let previous = before;
  for (let b = 0; b < n; b++) {
    start[b] = (first + b) * width;
    const level = levelAtEnd[b] as number;
    if (Number.isNaN(level)) {
      // No row in this bin: nothing advanced (the previous level carries over).
      rate[b] = Number.isFinite(previous) ? 0 : Number.NaN;
      continue;
    }
    rate[b] = (level - previous) / width;
    previous = level;
  }
  return { start, width, rate };
}

/** Cumulative bytes the sender transmitted, the best this series can tell. */
export function bytesSentCumulative(data: DirectionSeries): {
  values: Float64Array;
  includesRetransmissions: boolean;
} {
  if (data.bytesSent.some(Number.isFinite)) {
    return { values: data.bytesSent, includesRetransmissions: true };
  }
  if (!data.reduced) {
    const values = new Float64Array(data.length);
    let sum = 0;
    for (let i = 0; i < data.length; i++) {
      const len = data.payloadLen[i] as number;
      if (len > 0) sum += len;
      values[i] = sum;
    }
    return { values, includesRetransmissions: true };
  }
  // Reduced rows without a cumulative column: the highest sequence sent (new data only).
  const values = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    values[i] = (data.seq[i] as number) + Math.max(0, data.payloadLen[i] as number);
  }
  return { values, includesRetransmissions: false };
}
