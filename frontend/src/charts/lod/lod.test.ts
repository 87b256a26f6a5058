import { describe, expect, it } from "vitest";
import { barColumns } from "./bars";
import { m4Columns } from "./m4";
import { lowerBound, upperBound, visibleRange } from "./visibleRange";

const identity = (v: number) => v;

describe("visibleRange", () => {
  const time = Float64Array.from([0, 1, 1, 2, 3, 5, 8]);

  it("finds the rows in a window by binary search, one row of margin each side", () => {
    expect(lowerBound(time, 1)).toBe(1);
    expect(upperBound(time, 1)).toBe(3);
    expect(visibleRange(time, 2, 4)).toEqual({ lo: 2, hi: 6 });
  });

  it("clamps at the ends and is empty for an empty series", () => {
    expect(visibleRange(time, -10, 100)).toEqual({ lo: 0, hi: 7 });
    expect(visibleRange(new Float64Array(0), 0, 1)).toEqual({ lo: 0, hi: 0 });
  });
});

describe("m4Columns", () => {
  it("keeps first, last, min and max of each pixel column", () => {
    // Six rows in pixel 0, two in pixel 3.
    const time = Float64Array.from([0, 0.1, 0.2, 0.3, 0.4, 0.9, 3.2, 3.5]);
    const values = Float64Array.from([5, 9, 1, 7, 4, 6, 10, 2]);
    const c = m4Columns(time, values, 0, 8, identity, 10);
    expect(c.count).toBe(2);
    expect(Array.from(c.px.slice(0, 2))).toEqual([0, 3]);
    expect([c.first[0], c.last[0], c.min[0], c.max[0]]).toEqual([5, 6, 1, 9]);
    expect([c.first[1], c.last[1], c.min[1], c.max[1]]).toEqual([10, 2, 2, 10]);
    expect(c.firstTime[1]).toBe(3.2);
  });

  it("skips unknown values instead of drawing them as zero", () => {
    const time = Float64Array.from([0, 1, 2]);
    const values = Float64Array.from([3, Number.NaN, 4]);
    const c = m4Columns(time, values, 0, 3, identity, 10);
    expect(c.count).toBe(2);
    expect(Array.from(c.px.slice(0, 2))).toEqual([0, 2]);
  });

  it("reduces a million rows to at most one column per pixel", () => {
    const n = 1_000_000;
    const time = new Float64Array(n);
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      time[i] = i / n;
      values[i] = Math.sin(i / 1000) * 1000 + i;
    }
    const width = 800;
    const c = m4Columns(time, values, 0, n, (t) => t * width, width);
    expect(c.count).toBe(width);
    let max = Number.NEGATIVE_INFINITY;
    for (let k = 0; k < c.count; k++) max = Math.max(max, c.max[k] as number);
    expect(max).toBe(Math.max(...values.subarray(n - 2000)));
  });

  it("clamps rows left and right of the plot to the edge columns", () => {
    const time = Float64Array.from([-5, -4, 20]);
    const c = m4Columns(time, Float64Array.from([1, 2, 3]), 0, 3, identity, 10);
    expect(Array.from(c.px.slice(0, c.count))).toEqual([-1, 10]);
    expect(c.last[0]).toBe(2);
  });

  it("honours a row filter", () => {
    const time = Float64Array.from([0, 1, 2, 3]);
    const c = m4Columns(
      time,
      Float64Array.from([1, 2, 3, 4]),
      0,
      4,
      identity,
      10,
      (i) => i % 2 === 0,
    );
    expect(Array.from(c.first.slice(0, c.count))).toEqual([1, 3]);
  });
});

describe("barColumns", () => {
  it("draws single segments as they are and merges a column into their union", () => {
    const time = Float64Array.from([0.1, 0.2, 0.5, 2.0]);
    const seq = Float64Array.from([1, 1449, 100, 2897]);
    const len = Float64Array.from([1448, 1448, 10, 1448]);
    const c = barColumns(time, seq, len, 0, 4, identity, 10);
    expect(c.count).toBe(2);
    expect([c.low[0], c.high[0], c.rows[0], c.row[0]]).toEqual([1, 2897, 3, -1]);
    expect([c.low[1], c.high[1], c.rows[1], c.row[1]]).toEqual([2897, 4345, 1, 3]);
  });

  it("ignores pure ACKs (no payload)", () => {
    const c = barColumns(
      Float64Array.from([0, 1]),
      Float64Array.from([1, 1]),
      Float64Array.from([0, 0]),
      0,
      2,
      identity,
      10,
    );
    expect(c.count).toBe(0);
  });
});
