// The graphs' palettes as styles/theme.css defines them: every mark colour against the graph
// background (--bg) in both themes, WCAG 2.1 SC 1.4.11 non-text contrast (≥ 3:1), and every
// "var(--chart-…)" the graphs name defined in both themes.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ChartPalette, themedContext } from "./palette";
import type { DrawContext } from "./types";

/** The custom properties of the first rule whose selector starts with `selector`. */
function customProperties(css: string, selector: string): Map<string, string> {
  const start = css.indexOf(`${selector} {`);
  if (start < 0) throw new Error(`no rule ${selector}`);
  const body = css.slice(css.indexOf("{", start) + 1, css.indexOf("}", start));
  const out = new Map<string, string>();
  for (const m of body.matchAll(/(--[\w-]+):\s*([^;]+);/g))
    out.set(m[1] as string, (m[2] as string).trim());
  return out;
}

/** WCAG 2.1 relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const channels = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16) / 255);
  const [r, g, b] = channels.map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * (r as number) + 0.7152 * (g as number) + 0.0722 * (b as number);
}

function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return ((hi as number) + 0.05) / ((lo as number) + 0.05);
}

const themeCss = readFileSync(resolve(import.meta.dirname, "../../styles/theme.css"), "utf8");

const THEMES = {
  light: customProperties(themeCss, ":root"),
  dark: customProperties(themeCss, ':root[data-theme="dark"]'),
};
const systemDark = customProperties(themeCss, '  :root:not([data-theme="light"])');
const chartColors = (props: Map<string, string>) =>
  [...props].filter(([name]) => name.startsWith("--chart-"));

const sources = import.meta.glob("../**/*.{ts,tsx}", {
  query: "?raw",
  import: "default",
  eager: true,
});
const named = new Set(
  Object.entries(sources)
    .filter(([path]) => !path.endsWith(".test.ts"))
    .flatMap(([, text]) =>
      [...String(text).matchAll(/var\((--chart-[\w-]+)\)/g)].map((m) => m[1] as string),
    ),
);

describe("graph palettes", () => {
  it("computes WCAG contrast as the spec does", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrast("#767676", "#ffffff")).toBeCloseTo(4.54, 2);
  });

  for (const [theme, props] of Object.entries(THEMES)) {
    it(`${theme}: every mark colour has ≥ 3:1 contrast against the graph background`, () => {
      const bg = props.get("--bg") as string;
      const colors = chartColors(props);
      expect(colors.length).toBeGreaterThanOrEqual(15);
      const low = colors
        .map(([name, color]) => ({ name, ratio: Math.round(contrast(color, bg) * 100) / 100 }))
        .filter((c) => c.ratio < 3);
      expect(low).toEqual([]);
    });

    it(`${theme}: defines every colour the graphs name`, () => {
      expect(named.size).toBeGreaterThanOrEqual(15);
      const missing = [...named].filter((name) => !props.has(name));
      expect(missing).toEqual([]);
    });
  }

  it("the system's dark theme is the forced dark theme", () => {
    expect(chartColors(systemDark)).toEqual(chartColors(THEMES.dark));
  });

  it("retransmissions stay red and the ACK line green in both themes", () => {
    for (const props of Object.values(THEMES)) {
      const hue = (name: string) => {
        const hex = props.get(name) as string;
        const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
        return { r: r as number, g: g as number, b: b as number };
      };
      const red = hue("--chart-retransmission");
      expect(red.r).toBeGreaterThan(red.g + 80);
      const green = hue("--chart-ack");
      expect(green.g).toBeGreaterThan(green.r + 40);
      expect(green.g).toBeGreaterThan(green.b + 40);
    }
  });
});

describe("ChartPalette", () => {
  it("resolves var() names once and leaves plain colours alone", () => {
    let lookups = 0;
    const palette = new ChartPalette((name) => {
      lookups += 1;
      return name === "--chart-ack" ? " #51cf66" : "";
    });
    expect(palette.resolve("var(--chart-ack)")).toBe("#51cf66");
    expect(palette.resolve("var(--chart-ack)")).toBe("#51cf66");
    expect(lookups).toBe(1);
    expect(palette.resolve("var(--chart-none, #123456)")).toBe("#123456");
    expect(palette.resolve("#abcdef")).toBe("#abcdef");
  });

  it("a themed context paints the resolved colour", () => {
    const painted: Record<string, unknown> = { strokeStyle: "", fillStyle: "" };
    const ctx = themedContext(painted as unknown as DrawContext, new ChartPalette(() => "#ff6b6b"));
    ctx.strokeStyle = "var(--chart-retransmission)";
    ctx.fillStyle = "var(--chart-rst)";
    expect(painted).toEqual({ strokeStyle: "#ff6b6b", fillStyle: "#ff6b6b" });
  });
});
