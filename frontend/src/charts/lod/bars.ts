// Pixel-column reduction of vertical bars (tcptrace's segments: a bar from seq to seq + len at the
// segment's time). When there are more bars than pixels, the union of the bars in one pixel column
// is what the eye sees, so one bar [min start, max end] per column draws the same image.

import type { Scale } from "./m4";

export interface BarColumns {
  readonly count: number;
  readonly px: Int32Array;
  readonly low: Float64Array;
  readonly high: Float64Array;
  /** Rows merged into each column (1 = the bar is a single segment and gets its end ticks). */
  readonly rows: Int32Array;
  /** The row of a column holding a single bar, -1 otherwise. */
  readonly row: Int32Array;
}

export function barColumns(
  time: Float64Array,
  start: Float64Array,
  length: Float64Array,
  lo: number,
  hi: number,
  x: Scale,
  width: number,
  include?: (row: number) => boolean,
): BarColumns {
  const capacity = Math.max(0, Math.min(hi - lo, Math.ceil(width) + 3));
  const px = new Int32Array(capacity);
  const low = new Float64Array(capacity);
  const high = new Float64Array(capacity);
  const rows = new Int32Array(capacity);
  const row = new Int32Array(capacity);
  let count = 0;
  let current = Number.NaN;
  for (let i = lo; i < hi; i++) {
    const s = start[i] as number;
    const len = length[i] as number;
    if (!Number.isFinite(s) || !(len > 0) || (include && !include(i))) continue;
    const column = Math.min(Math.ceil(width), Math.max(-1, Math.floor(x(time[i] as number))));
    if (column !== current && count < capacity) {
      px[count] = column;
      low[count] = s;
      high[count] = s + len;
      rows[count] = 1;
      row[count] = i;
      count++;
      current = column;
    } else {
      const k = count - 1;
      if (s < (low[k] as number)) low[k] = s;
      if (s + len > (high[k] as number)) high[k] = s + len;
      rows[k] = (rows[k] as number) + 1;
      row[k] = -1;
    }
  }
  return { count, px, low, high, rows, row };
}
