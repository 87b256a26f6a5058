import { describe, expect, it } from "vitest";
import { legendGlyph, markPath } from "./MarksLayer";
import { MARK_STYLES, type MarkKind } from "./marks";

/** The path's points, as [x, y] pairs (every path here is absolute M/L/h/v/V/a with numbers). */
function bounds(d: string): { w: number; h: number } {
  const xs: number[] = [];
  const ys: number[] = [];
  let x = 0;
  let y = 0;
  for (const [, cmd, args] of d.matchAll(/([MLVhvZa])([^MLVhvZa]*)/g)) {
    const n = (args ?? "")
      .trim()
      .split(/[\s,]+/)
      .filter(Boolean)
      .map(Number);
    if (cmd === "M" || cmd === "L") [x, y] = [n[0] as number, n[1] as number];
    else if (cmd === "V") y = n[0] as number;
    else if (cmd === "h") x += n[0] as number;
    else if (cmd === "v") y += n[0] as number;
    else if (cmd === "a") {
      xs.push(x + (n[5] as number) / 2);
      ys.push(y - (n[0] as number), y + (n[0] as number));
      x += n[5] as number;
    }
    xs.push(x);
    ys.push(y);
  }
  return { w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) };
}

describe("legend symbols", () => {
  const kinds = Object.keys(MARK_STYLES) as MarkKind[];

  it("are the glyphs the graph draws, the same shape and size, only placed elsewhere", () => {
    for (const kind of kinds) {
      const drawn = bounds(markPath(kind, 100, 100));
      const legend = bounds(legendGlyph(kind, 9, 6).d);
      expect(legend, kind).toEqual(drawn);
    }
    // issue 30: retransmissions are drawn as dots and zero windows as triangles
    expect(legendGlyph("retransmission", 9, 6).d).toContain("a3.5 3.5");
    expect(legendGlyph("zero_window", 9, 6).d).toMatch(/^M3 2L15 2L9 10Z$/);
  });

  it("fit the legend's 18 × 12 box", () => {
    for (const kind of kinds) {
      const { w, h } = bounds(legendGlyph(kind, 9, 6).d);
      expect(w, kind).toBeLessThanOrEqual(18);
      expect(h, kind).toBeLessThanOrEqual(12);
    }
  });
});
