import { describe, expect, it } from "vitest";
import {
  boxView,
  clampView,
  formatViewParam,
  panBy,
  parseView,
  transformForView,
  viewForTransform,
  zoomAt,
} from "./view";

const bounds = { from: 0, to: 10 };

describe("time view moves", () => {
  it("zooms about a point, keeping it under the cursor", () => {
    const v = zoomAt({ from: 0, to: 10 }, 5, 2, bounds);
    expect(v).toEqual({ from: 2.5, to: 7.5 });
    const w = zoomAt({ from: 0, to: 10 }, 0, 4, bounds);
    expect(w).toEqual({ from: 0, to: 2.5 });
  });

  it("cannot zoom out past the data or pan out of it", () => {
    expect(zoomAt({ from: 2, to: 4 }, 3, 0.01, bounds)).toEqual({ from: 0, to: 10 });
    expect(panBy({ from: 8, to: 9 }, 5, bounds)).toEqual({ from: 9, to: 10 });
    expect(panBy({ from: 1, to: 2 }, -5, bounds)).toEqual({ from: 0, to: 1 });
  });

  it("takes a drag box in either direction", () => {
    expect(boxView(6, 4, bounds)).toEqual({ from: 4, to: 6 });
  });

  it("keeps a minimum span of one microsecond", () => {
    const v = clampView({ from: 5, to: 5 }, bounds);
    expect(v.to - v.from).toBeCloseTo(1e-6, 12);
  });

  it("round-trips through the d3-zoom transform", () => {
    const view = { from: 2, to: 3 };
    const t = transformForView(view, bounds, 800);
    expect(t.k).toBeCloseTo(10);
    const back = viewForTransform(t, bounds, 800);
    expect(back.from).toBeCloseTo(2, 9);
    expect(back.to).toBeCloseTo(3, 9);
  });

  it("reads and writes the URL parameters", () => {
    expect(parseView("1.5", "2")).toEqual({ from: 1.5, to: 2 });
    expect(parseView("2", "1")).toBeNull();
    expect(parseView("x", "2")).toBeNull();
    expect(parseView(null, "2")).toBeNull();
    expect(formatViewParam(1.25)).toBe("1.25");
    expect(formatViewParam(2)).toBe("2");
    expect(formatViewParam(0.0000014)).toBe("0.000001");
  });
});
