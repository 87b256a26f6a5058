import type { ScaleLinear } from "d3-scale";

/** The plot area's scales in CSS pixels, origin at the top-left of the plot (inside the axes). */
export interface PlotArea {
  readonly x: ScaleLinear<number, number>;
  readonly y: ScaleLinear<number, number>;
  readonly width: number;
  readonly height: number;
}

/** One dense layer, drawn on the shared canvas in the order given. */
export interface CanvasLayer {
  readonly id: string;
  draw(ctx: CanvasRenderingContext2D, area: PlotArea): void;
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
