// The graphs' colours come from the theme (styles/theme.css, --chart-*): layers and marks name a
// colour as "var(--chart-…)", which SVG and HTML resolve by themselves, but a canvas does not. The
// palette resolves those names against the chart's computed style, once per theme: ChartFrame reads
// a new palette when the theme changes (useThemeVersion) and redraws, and draws through a context
// that resolves every colour it is given, so the canvas and the SVG export paint the theme's colours.

import { useEffect, useState } from "react";
import type { DrawContext } from "./types";

const VAR_REFERENCE = /^var\(\s*(--[\w-]+)\s*(?:,\s*(.+))?\)$/;

/** Colours named by CSS custom property, resolved against one element's style, cached. */
export class ChartPalette {
  private readonly cache = new Map<string, string>();

  constructor(private readonly lookup: (name: string) => string) {}

  /** The element's computed custom properties (inherited from <html data-theme>). */
  static of(element: Element): ChartPalette {
    const style = getComputedStyle(element);
    return new ChartPalette((name) => style.getPropertyValue(name));
  }

  /** "var(--chart-ack)" → the theme's colour; any other colour as it is. */
  resolve(color: string): string {
    const match = VAR_REFERENCE.exec(color);
    if (!match) return color;
    const known = this.cache.get(color);
    if (known !== undefined) return known;
    const value = this.lookup(match[1] as string).trim() || (match[2]?.trim() ?? "") || "#808080";
    this.cache.set(color, value);
    return value;
  }
}

/** A drawing context that hands the palette's colour for every "var(--…)" it is given. */
export function themedContext(ctx: DrawContext, palette: ChartPalette): DrawContext {
  return {
    get strokeStyle() {
      return ctx.strokeStyle;
    },
    set strokeStyle(value) {
      ctx.strokeStyle = typeof value === "string" ? palette.resolve(value) : value;
    },
    get fillStyle() {
      return ctx.fillStyle;
    },
    set fillStyle(value) {
      ctx.fillStyle = typeof value === "string" ? palette.resolve(value) : value;
    },
    get lineWidth() {
      return ctx.lineWidth;
    },
    set lineWidth(value) {
      ctx.lineWidth = value;
    },
    get lineJoin() {
      return ctx.lineJoin;
    },
    set lineJoin(value) {
      ctx.lineJoin = value;
    },
    get globalAlpha() {
      return ctx.globalAlpha;
    },
    set globalAlpha(value) {
      ctx.globalAlpha = value;
    },
    setLineDash: (segments) => ctx.setLineDash(segments),
    save: () => ctx.save(),
    restore: () => ctx.restore(),
    beginPath: () => ctx.beginPath(),
    moveTo: (x, y) => ctx.moveTo(x, y),
    lineTo: (x, y) => ctx.lineTo(x, y),
    closePath: () => ctx.closePath(),
    rect: (x, y, w, h) => ctx.rect(x, y, w, h),
    arc: (x, y, r, start, end, ccw) => ctx.arc(x, y, r, start, end, ccw),
    clip: () => ctx.clip(),
    fillRect: (x, y, w, h) => ctx.fillRect(x, y, w, h),
    stroke: (path) => (path ? ctx.stroke(path) : ctx.stroke()),
    fill: (path) => (path ? ctx.fill(path) : ctx.fill()),
  };
}

/**
 * A number that changes whenever the theme may have: the toggle's <html data-theme> or, when it
 * follows the system, prefers-color-scheme.
 */
export function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const observer = new MutationObserver(bump);
    observer.observe(document.documentElement, {
      attributes: true,
      attributeFilter: ["data-theme"],
    });
    const media = globalThis.matchMedia?.("(prefers-color-scheme: dark)");
    media?.addEventListener("change", bump);
    return () => {
      observer.disconnect();
      media?.removeEventListener("change", bump);
    };
  }, []);
  return version;
}
