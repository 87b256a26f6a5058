// The dense layers as vector SVG, for the SVG export: a drawing context with the part of the
// canvas API the layers use, which records each stroke and fill as an SVG element instead of
// painting pixels. The layers draw their level-of-detail columns (a few vertices per pixel), so
// the file stays bounded whatever the number of packets.

import { type ChartPalette, themedContext } from "./palette";
import type { CanvasLayer, DrawContext, PlotArea } from "./types";

const SVG_NS = "http://www.w3.org/2000/svg";

/** The SVG path text each glyph was made from (a Path2D cannot be read back). */
const glyphSources = new WeakMap<Path2D, string>();

/** A Path2D from SVG path text, readable by the recorder. */
export function glyph(d: string): Path2D {
  const path = new Path2D(d);
  glyphSources.set(path, d);
  return path;
}

interface PaintState {
  strokeStyle: string;
  fillStyle: string;
  lineWidth: number;
  lineJoin: CanvasLineJoin;
  globalAlpha: number;
  dash: number[];
}

/** Two decimals: a hundredth of a CSS pixel, and short files. */
function n(value: number): string {
  return String(Math.round(value * 100) / 100);
}

export class SvgRecorder implements DrawContext {
  private state: PaintState = {
    strokeStyle: "#000000",
    fillStyle: "#000000",
    lineWidth: 1,
    lineJoin: "miter",
    globalAlpha: 1,
    dash: [],
  };
  private readonly saved: PaintState[] = [];
  private d = "";

  constructor(private readonly parent: Element) {}

  get strokeStyle(): string {
    return this.state.strokeStyle;
  }
  set strokeStyle(value: string | CanvasGradient | CanvasPattern) {
    this.state.strokeStyle = String(value);
  }
  get fillStyle(): string {
    return this.state.fillStyle;
  }
  set fillStyle(value: string | CanvasGradient | CanvasPattern) {
    this.state.fillStyle = String(value);
  }
  get lineWidth(): number {
    return this.state.lineWidth;
  }
  set lineWidth(value: number) {
    this.state.lineWidth = value;
  }
  get lineJoin(): CanvasLineJoin {
    return this.state.lineJoin;
  }
  set lineJoin(value: CanvasLineJoin) {
    this.state.lineJoin = value;
  }
  get globalAlpha(): number {
    return this.state.globalAlpha;
  }
  set globalAlpha(value: number) {
    this.state.globalAlpha = value;
  }

  setLineDash(segments: number[]): void {
    this.state.dash = [...segments];
  }
  save(): void {
    this.saved.push({ ...this.state, dash: [...this.state.dash] });
  }
  restore(): void {
    this.state = this.saved.pop() ?? this.state;
  }
  beginPath(): void {
    this.d = "";
  }
  moveTo(x: number, y: number): void {
    this.d += `M${n(x)} ${n(y)}`;
  }
  lineTo(x: number, y: number): void {
    this.d += `L${n(x)} ${n(y)}`;
  }
  closePath(): void {
    this.d += "Z";
  }
  rect(x: number, y: number, w: number, h: number): void {
    this.d += `M${n(x)} ${n(y)}h${n(w)}v${n(h)}h${n(-w)}Z`;
  }
  /** Circles and arcs (counter-clockwise or not) as SVG elliptical arc commands. */
  arc(x: number, y: number, r: number, start: number, end: number, ccw = false): void {
    const sweep = ccw ? start - end : end - start;
    const at = (a: number) => `${n(x + r * Math.cos(a))} ${n(y + r * Math.sin(a))}`;
    this.d += `${this.d ? "L" : "M"}${at(start)}`;
    if (Math.abs(sweep) >= 2 * Math.PI - 1e-9) {
      // A full circle is two half arcs: one arc command cannot end where it starts.
      const half = start + (ccw ? -Math.PI : Math.PI);
      const flag = ccw ? 0 : 1;
      this.d += `A${n(r)} ${n(r)} 0 1 ${flag} ${at(half)}A${n(r)} ${n(r)} 0 1 ${flag} ${at(start)}`;
      return;
    }
    const large = Math.abs(sweep) % (2 * Math.PI) > Math.PI ? 1 : 0;
    this.d += `A${n(r)} ${n(r)} 0 ${large} ${ccw ? 0 : 1} ${at(end)}`;
  }
  /** The recorder draws inside the plot's clip path already: nothing to do. */
  clip(): void {}

  stroke(path?: Path2D): void {
    const d = path ? glyphSources.get(path) : this.d;
    if (!d) return;
    const s = this.state;
    this.element("path", {
      d,
      fill: "none",
      stroke: s.strokeStyle,
      "stroke-width": n(s.lineWidth),
      "stroke-linejoin": s.lineJoin,
      ...(s.dash.length ? { "stroke-dasharray": s.dash.join(" ") } : {}),
    });
  }
  fill(path?: Path2D): void {
    const d = path ? glyphSources.get(path) : this.d;
    if (!d) return;
    this.element("path", { d, fill: this.state.fillStyle, stroke: "none" });
  }
  fillRect(x: number, y: number, w: number, h: number): void {
    this.element("rect", {
      x: n(x),
      y: n(y),
      width: n(w),
      height: n(h),
      fill: this.state.fillStyle,
    });
  }

  private element(name: string, attributes: Record<string, string>): void {
    const el = this.parent.ownerDocument.createElementNS(SVG_NS, name);
    for (const [key, value] of Object.entries(attributes)) el.setAttribute(key, value);
    if (this.state.globalAlpha < 1) el.setAttribute("opacity", n(this.state.globalAlpha));
    this.parent.append(el);
  }
}

/** Per graph frame element: how to draw its current layers into an SVG group (ChartFrame). */
const frameVectors = new WeakMap<Element, (parent: Element) => void>();

export function setFrameVectors(frame: Element, draw: (parent: Element) => void): void {
  frameVectors.set(frame, draw);
}

/** Draws the dense layers of `frame` as they are on screen into `parent`; false if it has none. */
export function drawFrameVectors(frame: Element, parent: Element): boolean {
  const draw = frameVectors.get(frame);
  draw?.(parent);
  return draw !== undefined;
}

/** The layers, in order, into `parent` as SVG elements, in the palette's colours (the theme's). */
export function recordLayers(
  parent: Element,
  layers: readonly CanvasLayer[],
  area: PlotArea,
  palette: ChartPalette,
): void {
  for (const layer of layers) {
    const recorder = new SvgRecorder(parent);
    layer.draw(themedContext(recorder, palette), area);
  }
}
