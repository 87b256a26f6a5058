// Canvas primitives shared by the dense layers: lines, steps and bars from pixel columns (lod/),
// so every layer draws at most a few vertices per pixel whatever the number of packets.

import type { BarColumns } from "../lod/bars";
import type { PixelColumns, Scale } from "../lod/m4";
import type { DrawContext } from "./types";

/** A line through the columns: first → min → max → last in each pixel column (M4). */
export function strokeLine(ctx: DrawContext, c: PixelColumns, y: Scale): void {
  if (c.count === 0) return;
  ctx.beginPath();
  for (let k = 0; k < c.count; k++) {
    const px = (c.px[k] as number) + 0.5;
    const first = y(c.first[k] as number);
    if (k === 0) ctx.moveTo(px, first);
    else ctx.lineTo(px, first);
    ctx.lineTo(px, y(c.min[k] as number));
    ctx.lineTo(px, y(c.max[k] as number));
    ctx.lineTo(px, y(c.last[k] as number));
  }
  ctx.stroke();
}

/**
 * A step line (the value holds until the next row, as an ACK or window does): horizontal from the
 * previous column's last value to this column, then vertical through this column's range. The last
 * value runs on to `endPx` (the right edge of the data).
 */
export function strokeSteps(ctx: DrawContext, c: PixelColumns, y: Scale, endPx: number): void {
  if (c.count === 0) return;
  ctx.beginPath();
  let lastY = 0;
  for (let k = 0; k < c.count; k++) {
    const px = (c.px[k] as number) + 0.5;
    const first = y(c.first[k] as number);
    if (k === 0) ctx.moveTo(px, first);
    else {
      ctx.lineTo(px, lastY);
      ctx.lineTo(px, first);
    }
    ctx.lineTo(px, y(c.min[k] as number));
    ctx.lineTo(px, y(c.max[k] as number));
    lastY = y(c.last[k] as number);
    ctx.lineTo(px, lastY);
  }
  ctx.lineTo(endPx, lastY);
  ctx.stroke();
}

/**
 * Vertical bars; a column holding a single segment gets tcptrace's end ticks (a short horizontal
 * stroke at seq and at seq + len) so neighbouring segments stay distinguishable when zoomed in.
 */
export function strokeBars(ctx: DrawContext, c: BarColumns, y: Scale, tickHalfWidth: number): void {
  if (c.count === 0) return;
  ctx.beginPath();
  for (let k = 0; k < c.count; k++) {
    const px = (c.px[k] as number) + 0.5;
    const top = y(c.high[k] as number);
    const bottom = y(c.low[k] as number);
    ctx.moveTo(px, bottom);
    // At least one pixel tall, so a 1-byte probe still shows.
    ctx.lineTo(px, Math.min(top, bottom - 1));
    if (c.rows[k] === 1 && tickHalfWidth > 0) {
      ctx.moveTo(px - tickHalfWidth, top);
      ctx.lineTo(px + tickHalfWidth + 1, top);
      ctx.moveTo(px - tickHalfWidth, bottom);
      ctx.lineTo(px + tickHalfWidth + 1, bottom);
    }
  }
  ctx.stroke();
}

/** A canvas sized for the device pixel ratio, cleared, with a transform to CSS pixels. */
export function prepareCanvas(
  canvas: HTMLCanvasElement,
  width: number,
  height: number,
): CanvasRenderingContext2D | null {
  const ratio = typeof window === "undefined" ? 1 : window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * ratio));
  const h = Math.max(1, Math.round(height * ratio));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  const ctx = canvas.getContext("2d");
  if (!ctx) return null;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}
