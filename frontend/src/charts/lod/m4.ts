// Pixel-column reduction of a line for the canvas (M4: Jugel et al., "M4: A Visualization-Oriented
// Time Series Data Aggregation", VLDB 2014). Per pixel column keep the first, last, minimum and
// maximum value: drawing first → min → max → last per column gives the same pixels as drawing every
// point, so a line over a million rows costs one path of at most 4 × width vertices.

export type Scale = (value: number) => number;

export interface PixelColumns {
  /** Number of non-empty columns; the arrays below are valid in [0, count). */
  readonly count: number;
  /** Pixel x of the column (integer). */
  readonly px: Int32Array;
  readonly first: Float64Array;
  readonly last: Float64Array;
  readonly min: Float64Array;
  readonly max: Float64Array;
  /** Time of the column's first row (for steps: where the previous value ends). */
  readonly firstTime: Float64Array;
}

/**
 * M4 columns of `values` against `time` over rows [lo, hi). Rows with a non-finite value are
 * skipped (an unknown window is a gap, not a zero). Pixel columns outside [-1, width] are kept
 * clamped to -1 / width so lines still run to the edge of the plot.
 */
export function m4Columns(
  time: Float64Array,
  values: Float64Array,
  lo: number,
  hi: number,
  x: Scale,
  width: number,
  include?: (row: number) => boolean,
): PixelColumns {
  const capacity = Math.max(0, Math.min(hi - lo, Math.ceil(width) + 3));
  const px = new Int32Array(capacity);
  const first = new Float64Array(capacity);
  const last = new Float64Array(capacity);
  const min = new Float64Array(capacity);
  const max = new Float64Array(capacity);
  const firstTime = new Float64Array(capacity);
  let count = 0;
  let current = Number.NaN;
  for (let i = lo; i < hi; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v) || (include && !include(i))) continue;
    const t = time[i] as number;
    const column = Math.min(Math.ceil(width), Math.max(-1, Math.floor(x(t))));
    // Capture timestamps can step backwards (a clock adjustment): such a row joins the current
    // column once the column budget is spent rather than being dropped.
    if (column !== current && count < capacity) {
      px[count] = column;
      first[count] = v;
      last[count] = v;
      min[count] = v;
      max[count] = v;
      firstTime[count] = t;
      count++;
      current = column;
    } else {
      const k = count - 1;
      last[k] = v;
      if (v < (min[k] as number)) min[k] = v;
      if (v > (max[k] as number)) max[k] = v;
    }
  }
  return { count, px, first, last, min, max, firstTime };
}
