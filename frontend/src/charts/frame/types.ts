import type { ScaleLinear } from "d3-scale";

/** The plot area's scales in CSS pixels, origin at the top-left of the plot (inside the axes). */
export interface PlotArea {
  readonly x: ScaleLinear<number, number>;
  readonly y: ScaleLinear<number, number>;
  readonly width: number;
  readonly height: number;
}

/**
 * The part of the canvas 2D API the layers draw with: a canvas's context, or the SVG export's
 * recorder (frame/svgRecorder.ts), so each layer is written once for both.
 */
export type DrawContext = Pick<
  CanvasRenderingContext2D,
  | "strokeStyle"
  | "fillStyle"
  | "lineWidth"
  | "lineJoin"
  | "globalAlpha"
  | "setLineDash"
  | "save"
  | "restore"
  | "beginPath"
  | "moveTo"
  | "lineTo"
  | "closePath"
  | "rect"
  | "arc"
  | "clip"
  | "fillRect"
> & {
  stroke(path?: Path2D): void;
  fill(path?: Path2D): void;
};

/** One dense layer, drawn on the shared canvas in the order given. */
export interface CanvasLayer {
  readonly id: string;
  draw(ctx: DrawContext, area: PlotArea): void;
}

/** What the pointer is over, for the tooltip and for opening the packet's dissection. */
export interface HoverItem {
  readonly time: number;
  readonly value: number;
  readonly color: string;
  readonly title: string;
  readonly lines: readonly string[];
  /** 1-based frame number, when the item is one packet. */
  readonly frame?: number;
}

export const MARGIN = { top: 24, right: 20, bottom: 42, left: 84 } as const;
