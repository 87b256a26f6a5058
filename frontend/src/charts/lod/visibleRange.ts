// Which rows of a time-sorted series fall in a time window: two binary searches, so a pan over a
// million rows costs microseconds, not a scan.

/** First index whose time is >= t (times non-decreasing). */
export function lowerBound(time: Float64Array, t: number, lo = 0, hi = time.length): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if ((time[mid] as number) < t) a = mid + 1;
    else b = mid;
  }
  return a;
}

/** First index whose time is > t. */
export function upperBound(time: Float64Array, t: number, lo = 0, hi = time.length): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if ((time[mid] as number) <= t) a = mid + 1;
    else b = mid;
  }
  return a;
}

/**
 * Rows [lo, hi) with time in [from, to], widened by one row on each side so lines and steps
 * enter and leave the plot instead of starting at its first visible point.
 */
export function visibleRange(
  time: Float64Array,
  from: number,
  to: number,
): { lo: number; hi: number } {
  const lo = Math.max(0, lowerBound(time, from) - 1);
  const hi = Math.min(time.length, upperBound(time, to) + 1);
  return { lo, hi: Math.max(lo, hi) };
}
