// The time window a graph shows, and the pure moves on it (zoom about a point, pan, box, reset).
// React keeps the window in the URL (`from`, `to`); d3-zoom turns wheel and drag into these moves.

import { type ZoomTransform, zoomIdentity } from "d3-zoom";

export interface TimeView {
  readonly from: number;
  readonly to: number;
}

/** The smallest window a graph zooms to: 1 µs, below pcap timestamp resolution that matters. */
export const MIN_SPAN_S = 1e-6;

/** Keeps a window inside the data's bounds and at least MIN_SPAN_S wide, preserving its span. */
export function clampView(view: TimeView, bounds: TimeView): TimeView {
  const full = Math.max(bounds.to - bounds.from, MIN_SPAN_S);
  const span = Math.min(Math.max(view.to - view.from, MIN_SPAN_S), full);
  let from = Math.max(bounds.from, Math.min(view.from, bounds.from + full - span));
  if (!Number.isFinite(from)) from = bounds.from;
  return { from, to: from + span };
}

/** Zoom by `factor` (> 1 zooms in) keeping time `at` under the same pixel. */
export function zoomAt(view: TimeView, at: number, factor: number, bounds: TimeView): TimeView {
  const from = at - (at - view.from) / factor;
  const to = at + (view.to - at) / factor;
  return clampView({ from, to }, bounds);
}

/** Move the window by a fraction of its span (positive: later in time). */
export function panBy(view: TimeView, fraction: number, bounds: TimeView): TimeView {
  const shift = (view.to - view.from) * fraction;
  return clampView({ from: view.from + shift, to: view.to + shift }, bounds);
}

/** The window between two times picked with a drag box, in either order. */
export function boxView(a: number, b: number, bounds: TimeView): TimeView {
  return clampView({ from: Math.min(a, b), to: Math.max(a, b) }, bounds);
}

/**
 * The d3-zoom transform that shows `view` when the untransformed x scale maps `bounds` onto
 * [0, width]: rescaleX(transform) then has `view` as its domain.
 */
export function transformForView(view: TimeView, bounds: TimeView, width: number): ZoomTransform {
  const full = Math.max(bounds.to - bounds.from, MIN_SPAN_S);
  const k = full / Math.max(view.to - view.from, MIN_SPAN_S);
  const x0 = ((view.from - bounds.from) / full) * width;
  return zoomIdentity.translate(-k * x0, 0).scale(k);
}

/** The inverse of transformForView. */
export function viewForTransform(t: ZoomTransform, bounds: TimeView, width: number): TimeView {
  const full = Math.max(bounds.to - bounds.from, MIN_SPAN_S);
  const at = (px: number) => bounds.from + ((px - t.x) / t.k / width) * full;
  return { from: at(0), to: at(width) };
}

/** Parses `from`/`to` URL parameters; null when absent or not a finite window. */
export function parseView(from: string | null, to: string | null): TimeView | null {
  if (from === null || to === null || from === "" || to === "") return null;
  const a = Number(from);
  const b = Number(to);
  return Number.isFinite(a) && Number.isFinite(b) && b > a ? { from: a, to: b } : null;
}

/** URL form of a window: enough digits to survive a round trip at 1 µs. */
export function formatViewParam(seconds: number): string {
  return seconds.toFixed(6).replace(/\.?0+$/, "");
}
