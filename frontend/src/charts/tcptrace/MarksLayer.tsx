// The event marks as SVG (annotations: few, clickable, each one a packet), or on the canvas when a
// window holds too many to keep as DOM nodes (a lossy million-packet flow).

import { glyph } from "../frame/svgRecorder";
import type { CanvasLayer, PlotArea } from "../frame/types";
import { lowerBound, upperBound } from "../lod/visibleRange";
import { MARK_STYLES, type Mark, type MarkKind } from "./marks";

/** Above this many marks in view they are painted on the canvas instead of being SVG elements. */
export const MAX_SVG_MARKS = 1500;

/**
 * Each mark's glyph: its outline centred on (x, y), whether it is stroked (a line) or filled, and
 * where it sits relative to the point it marks (`dy`, px). The graph and its legend both draw from
 * this one table (markPath, legendGlyph), so the legend's symbol is the drawn one.
 */
const GLYPHS: Readonly<
  Record<MarkKind, { outline: (x: number, y: number) => string; stroked: boolean; dy: number }>
> = {
  // An orange diamond above the top of the segment, so the bar and the window line it touches
  // stay visible.
  window_full: {
    outline: (x, y) => `M${x} ${y - 4.5}L${x + 3.5} ${y}L${x} ${y + 4.5}L${x - 3.5} ${y}Z`,
    stroked: false,
    dy: -6.5,
  },
  // A crimson triangle pointing down at the ACK that closed the window.
  zero_window: {
    outline: (x, y) => `M${x - 6} ${y - 4}L${x + 6} ${y - 4}L${x} ${y + 4}Z`,
    stroked: false,
    dy: -5,
  },
  // A violet tick under the ACK line.
  duplicate_ack: { outline: (x, y) => `M${x} ${y - 4}V${y + 4}`, stroked: true, dy: 6 },
  // A dot at the top of the re-sent segment's (red) bar.
  retransmission: { outline: circle, stroked: false, dy: 0 },
  zero_window_probe: { outline: circle, stroked: false, dy: 0 },
  out_of_order: { outline: (x, y) => `M${x - 3} ${y - 3}h6v6h-6Z`, stroked: false, dy: 0 },
  lost_segment: {
    outline: (x, y) => `M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x + 4} ${y - 4}L${x - 4} ${y + 4}`,
    stroked: true,
    dy: 0,
  },
  // SYN, FIN and RST are written as words on the SVG; on the canvas, a short dash.
  syn: { outline: dash, stroked: true, dy: 0 },
  fin: { outline: dash, stroked: true, dy: 0 },
  rst: { outline: dash, stroked: true, dy: 0 },
};

function circle(x: number, y: number): string {
  return `M${x - 3.5} ${y}a3.5 3.5 0 1 0 7 0a3.5 3.5 0 1 0 -7 0`;
}

function dash(x: number, y: number): string {
  return `M${x - 3} ${y}h6`;
}

/** SVG path of the mark of `kind` for the point (x, y), placed as the graph draws it. */
export function markPath(kind: MarkKind, x: number, y: number): string {
  const glyph = GLYPHS[kind];
  return glyph.outline(x, y + glyph.dy);
}

/** The mark's own glyph for the legend: centred on (x, y), filled or stroked as drawn. */
export function legendGlyph(kind: MarkKind, x: number, y: number): { d: string; stroked: boolean } {
  const glyph = GLYPHS[kind];
  return { d: glyph.outline(x, y), stroked: glyph.stroked };
}

const TEXT: ReadonlySet<MarkKind> = new Set(["syn", "fin", "rst"]);

export function marksInView(marks: readonly Mark[], times: Float64Array, from: number, to: number) {
  return marks.slice(lowerBound(times, from), upperBound(times, to));
}

/**
 * Marks far enough apart to tell apart: a mark within MIN_GAP_PX of the last one drawn of its kind
 * adds nothing but ink (the whole-flow view of 420 window-full events is one orange smear). The
 * counts (legend, data attributes) still count every mark; zooming in shows each one.
 */
export const MIN_GAP_PX = 9;

export function distinctMarks(marks: readonly Mark[], area: PlotArea): Mark[] {
  const last = new Map<string, { x: number; y: number }>();
  const out: Mark[] = [];
  for (const m of marks) {
    const x = area.x(m.time);
    const y = area.y(m.seq);
    const previous = last.get(m.kind);
    if (previous && Math.abs(previous.x - x) < MIN_GAP_PX && Math.abs(previous.y - y) < MIN_GAP_PX)
      continue;
    last.set(m.kind, { x, y });
    out.push(m);
  }
  return out;
}

export function MarksSvg(props: { marks: readonly Mark[]; area: PlotArea }) {
  const { area } = props;
  return (
    <g className="chart-marks" data-testid="tcptrace-marks">
      {distinctMarks(props.marks, area).map((m) => {
        const x = area.x(m.time);
        const y = area.y(m.seq);
        const style = MARK_STYLES[m.kind];
        const key = `${m.kind}:${m.side}:${m.row}`;
        if (TEXT.has(m.kind)) {
          return (
            <text
              key={key}
              className="chart-mark chart-mark-text"
              data-kind={m.kind}
              data-frame={m.frame}
              x={x + 4}
              y={y - 4}
              fill={style.color}
            >
              {style.label}
            </text>
          );
        }
        const stroked = GLYPHS[m.kind].stroked;
        return (
          <path
            key={key}
            className="chart-mark"
            data-kind={m.kind}
            data-frame={m.frame}
            d={markPath(m.kind, x, y)}
            fill={stroked ? "none" : style.color}
            stroke={stroked ? style.color : "var(--bg)"}
            strokeWidth={stroked ? 2 : 0.75}
          />
        );
      })}
    </g>
  );
}

/** The same glyphs on the canvas, for windows with more than MAX_SVG_MARKS marks. */
export function marksCanvasLayer(marks: readonly Mark[], times: Float64Array): CanvasLayer {
  return {
    id: "marks",
    draw(ctx, area) {
      const [from, to] = area.x.domain() as [number, number];
      const visible = marksInView(marks, times, from, to);
      if (visible.length <= MAX_SVG_MARKS) return; // drawn as SVG instead
      for (const m of visible) {
        const style = MARK_STYLES[m.kind];
        const path = glyph(markPath(m.kind, area.x(m.time), area.y(m.seq)));
        if (GLYPHS[m.kind].stroked) {
          ctx.strokeStyle = style.color;
          ctx.lineWidth = 2;
          ctx.stroke(path);
        } else {
          ctx.fillStyle = style.color;
          ctx.fill(path);
        }
      }
    },
  };
}
