// The frame every graph draws in: d3 scales and ticks, React-rendered axes and annotations (SVG),
// dense layers on one canvas, d3-zoom for wheel zoom and drag pan, a drag box to zoom, a crosshair
// with the values under the pointer, a tooltip that says what a mark means, keyboard shortcuts.
// The time window is owned by the caller (the URL); this component only proposes new windows.

import { scaleLinear } from "d3-scale";
import { select } from "d3-selection";
import { type ZoomBehavior, zoom } from "d3-zoom";
import {
  type KeyboardEvent,
  type PointerEvent,
  type ReactNode,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from "react";
import { type AxisFormat, formatSecondsTick } from "../numbers";
import {
  boxView,
  MIN_SPAN_S,
  panBy,
  type TimeView,
  transformForView,
  viewForTransform,
  zoomAt,
} from "../view";
import { prepareCanvas } from "./draw";
import { ChartPalette, themedContext, useThemeVersion } from "./palette";
import { recordLayers, setFrameVectors } from "./svgRecorder";
import "../charts.css";
import { Tooltip } from "./Tooltip";
import { type CanvasLayer, type HoverItem, MARGIN, type PlotArea } from "./types";

export interface ChartFrameProps {
  readonly label: string;
  readonly bounds: TimeView;
  readonly view: TimeView;
  readonly onViewChange: (view: TimeView) => void;
  readonly yDomain: readonly [number, number];
  readonly yLabel: string;
  /** The time axis' title (default: seconds since the capture's start). */
  readonly xLabel?: string;
  /** Tick labels of the y axis (numbers.ts AxisFormat: value, tick step, top tick). */
  readonly yTickFormat: AxisFormat;
  readonly layers: readonly CanvasLayer[];
  readonly annotations?: (area: PlotArea) => ReactNode;
  readonly nearest?: (area: PlotArea, px: number, py: number) => HoverItem | null;
  readonly onPick?: (item: HoverItem) => void;
  readonly height?: number;
  readonly dataAttributes?: Readonly<Record<string, string>>;
}

const ZOOM_STEP = 1.5;
const PAN_STEP = 0.2;
const DRAG_THRESHOLD_PX = 4;

export function ChartFrame(props: ChartFrameProps) {
  const { bounds, view, onViewChange, height = 440 } = props;
  const containerRef = useRef<HTMLDivElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const overlayRef = useRef<SVGRectElement>(null);
  const plotRef = useRef<SVGGElement>(null);
  const [outerWidth, setOuterWidth] = useState(900);
  // The container's measured width: the canvas is drawn only at it (the first render, before the
  // measurement, would be drawn at the default width and at once redrawn).
  const measuredWidth = useRef<number | null>(null);
  const [pointer, setPointer] = useState<{ px: number; py: number } | null>(null);
  const [drag, setDrag] = useState<{ start: number; current: number } | null>(null);
  // The theme's colours for the canvas, read once per theme (frame/palette.ts).
  const themeVersion = useThemeVersion();
  const palette = useRef<{ version: number; colors: ChartPalette } | null>(null);

  useLayoutEffect(() => {
    const element = containerRef.current;
    if (!element) return;
    const measure = () => {
      measuredWidth.current = Math.max(320, Math.floor(element.clientWidth));
      setOuterWidth(measuredWidth.current);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const width = outerWidth - MARGIN.left - MARGIN.right;
  const plotHeight = height - MARGIN.top - MARGIN.bottom;
  const area: PlotArea = useMemo(() => {
    const [y0, y1] = props.yDomain;
    return {
      x: scaleLinear().domain([view.from, view.to]).range([0, width]),
      y: scaleLinear()
        .domain([y0, y1 > y0 ? y1 : y0 + 1])
        .range([plotHeight, 0]),
      width,
      height: plotHeight,
    };
  }, [view.from, view.to, width, plotHeight, props.yDomain]);

  // Dense layers: redrawn whenever the scales or the layers change.
  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || measuredWidth.current !== outerWidth) return;
    const canvasCtx = prepareCanvas(canvas, area.width, area.height);
    if (!canvasCtx) return;
    if (palette.current?.version !== themeVersion) {
      palette.current = { version: themeVersion, colors: ChartPalette.of(canvas) };
    }
    const colors = palette.current.colors;
    const ctx = themedContext(canvasCtx, colors);
    ctx.save();
    ctx.beginPath();
    ctx.rect(0, 0, area.width, area.height);
    ctx.clip();
    for (const layer of props.layers) {
      ctx.save();
      layer.draw(ctx, area);
      ctx.restore();
    }
    ctx.restore();
    const element = containerRef.current;
    if (element) {
      // The same layers, at the same scales, as vectors for the SVG export.
      const layers = props.layers;
      setFrameVectors(element, (parent) => recordLayers(parent, layers, area, colors));
    }
  }, [area, outerWidth, props.layers, themeVersion]);

  // d3-zoom: wheel zooms about the pointer, Shift+drag (or middle button) pans. A plain drag is the
  // zoom box (below), so d3-zoom ignores it. One behaviour per mount: re-creating it while a wheel
  // gesture is under way would leave the gesture talking to the old behaviour's listeners.
  const latest = useRef({ bounds, view, width, onViewChange });
  latest.current = { bounds, view, width, onViewChange };
  const behaviorRef = useRef<ZoomBehavior<SVGGElement, unknown> | null>(null);
  useEffect(() => {
    const plot = plotRef.current;
    if (!plot) return;
    const behavior = zoom<SVGGElement, unknown>()
      .filter((event: Event) => {
        if (event.type === "wheel") return true;
        const e = event as MouseEvent;
        return (
          (e.type === "mousedown" || e.type === "pointerdown") && (e.shiftKey || e.button === 1)
        );
      })
      .on("zoom", (event) => {
        if (!event.sourceEvent) return;
        const { bounds: b, width: w } = latest.current;
        latest.current.onViewChange(viewForTransform(event.transform, b, w));
      });
    const selection = select(plot);
    selection.call(behavior).on("dblclick.zoom", null);
    behaviorRef.current = behavior;
    return () => {
      selection.on(".zoom", null);
      behaviorRef.current = null;
    };
  }, []);
  useEffect(() => {
    const plot = plotRef.current;
    const behavior = behaviorRef.current;
    if (!plot || !behavior) return;
    const full = Math.max(bounds.to - bounds.from, MIN_SPAN_S);
    behavior
      .scaleExtent([1, full / MIN_SPAN_S])
      .extent([
        [0, 0],
        [width, plotHeight],
      ])
      .translateExtent([
        [0, 0],
        [width, plotHeight],
      ]);
    // The view may have come from elsewhere (URL, keyboard, a finding): set the transform without
    // emitting a zoom event (d3-zoom's documented way), so the next wheel starts from it.
    select(plot).property("__zoom", transformForView(view, bounds, width));
  }, [bounds, view, width, plotHeight]);

  const xTicks = area.x.ticks(Math.max(2, Math.floor(width / 110)));
  const xStep =
    xTicks.length > 1 ? (xTicks[1] as number) - (xTicks[0] as number) : view.to - view.from;
  const yTicks = area.y.ticks(Math.max(2, Math.floor(plotHeight / 60)));
  const yStep = yTicks.length > 1 ? (yTicks[1] as number) - (yTicks[0] as number) : undefined;
  const yTop = Math.max(...yTicks.map(Math.abs), 0);

  const plotX = (event: { clientX: number; clientY: number }) => {
    const rect = overlayRef.current?.getBoundingClientRect();
    return rect ? { px: event.clientX - rect.left, py: event.clientY - rect.top } : null;
  };

  const hover = pointer && props.nearest ? props.nearest(area, pointer.px, pointer.py) : null;

  const onPointerDown = (event: PointerEvent<SVGSVGElement>) => {
    if (event.button !== 0 || event.shiftKey) return;
    const p = plotX(event);
    if (!p) return;
    event.currentTarget.setPointerCapture?.(event.pointerId);
    setDrag({ start: p.px, current: p.px });
  };
  const onPointerMove = (event: PointerEvent<SVGSVGElement>) => {
    const p = plotX(event);
    setPointer(p);
    if (drag && p) setDrag({ ...drag, current: Math.max(0, Math.min(width, p.px)) });
  };
  const onPointerUp = (event: PointerEvent<SVGSVGElement>) => {
    const p = plotX(event);
    if (drag && Math.abs(drag.current - drag.start) >= DRAG_THRESHOLD_PX) {
      onViewChange(boxView(area.x.invert(drag.start), area.x.invert(drag.current), bounds));
    } else if (p && props.nearest && props.onPick) {
      const item = props.nearest(area, p.px, p.py);
      if (item) props.onPick(item);
    }
    setDrag(null);
  };

  const onKeyDown = (event: KeyboardEvent<SVGSVGElement>) => {
    const centre = (view.from + view.to) / 2;
    const moves: Record<string, () => TimeView> = {
      "+": () => zoomAt(view, centre, ZOOM_STEP, bounds),
      "=": () => zoomAt(view, centre, ZOOM_STEP, bounds),
      "-": () => zoomAt(view, centre, 1 / ZOOM_STEP, bounds),
      ArrowLeft: () => panBy(view, -PAN_STEP, bounds),
      ArrowRight: () => panBy(view, PAN_STEP, bounds),
      "0": () => bounds,
      Home: () => bounds,
      Escape: () => bounds,
    };
    const move = moves[event.key];
    if (!move) return;
    event.preventDefault();
    onViewChange(move());
  };

  return (
    <div ref={containerRef} className="chart-frame" {...props.dataAttributes}>
      <canvas
        ref={canvasRef}
        className="chart-canvas"
        style={{ left: MARGIN.left, top: MARGIN.top, width, height: plotHeight }}
      />
      <svg
        className="chart-svg"
        width={outerWidth}
        height={height}
        role="application"
        aria-label={`${props.label}. Drag to zoom into a time range, wheel to zoom, Shift+drag to pan, arrow keys to pan, + and − to zoom, 0 or double-click to reset.`}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: an application role takes the keyboard shortcuts
        tabIndex={0}
        onKeyDown={onKeyDown}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={onPointerUp}
        onPointerLeave={() => setPointer(null)}
        onDoubleClick={() => onViewChange(bounds)}
        style={{ cursor: hover?.frame ? "pointer" : "crosshair" }}
      >
        <g ref={plotRef} transform={`translate(${MARGIN.left},${MARGIN.top})`}>
          <g className="chart-grid">
            {yTicks.map((t, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: ticks are slots; reusing nodes while zooming avoids DOM churn
              <line key={`gy${i}`} x1={0} x2={width} y1={area.y(t)} y2={area.y(t)} />
            ))}
            {xTicks.map((t, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: ticks are slots; reusing nodes while zooming avoids DOM churn
              <line key={`gx${i}`} x1={area.x(t)} x2={area.x(t)} y1={0} y2={plotHeight} />
            ))}
          </g>
          <g className="chart-axis" transform={`translate(0,${plotHeight})`}>
            <line x1={0} x2={width} />
            {xTicks.map((t, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: ticks are slots; reusing nodes while zooming avoids DOM churn
              <g key={`x${i}`} transform={`translate(${area.x(t)},0)`}>
                <line y2={5} />
                <text y={18} textAnchor="middle">
                  {formatSecondsTick(t, xStep)}
                </text>
              </g>
            ))}
            <text className="chart-axis-label" x={width} y={36} textAnchor="end">
              {props.xLabel ?? "time since capture start (s)"}
            </text>
          </g>
          <g className="chart-axis">
            <line y1={0} y2={plotHeight} />
            {yTicks.map((t, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: ticks are slots; reusing nodes while zooming avoids DOM churn
              <g key={`y${i}`} transform={`translate(0,${area.y(t)})`}>
                <line x2={-5} />
                <text x={-8} dy="0.32em" textAnchor="end">
                  {props.yTickFormat(t, yStep, yTop)}
                </text>
              </g>
            ))}
            {/* Along the axis, as in tcptrace and Wireshark: the top margin is for evidence labels. */}
            <text
              className="chart-axis-label"
              transform={`translate(${-MARGIN.left + 14},${plotHeight / 2}) rotate(-90)`}
              textAnchor="middle"
            >
              {props.yLabel}
            </text>
          </g>
          <rect
            ref={overlayRef}
            className="chart-overlay"
            data-testid="chart-overlay"
            width={width}
            height={plotHeight}
          />
          <g className="chart-annotations">{props.annotations?.(area)}</g>
          {pointer && !drag && pointer.px >= 0 && pointer.px <= width && (
            <g className="chart-crosshair" pointerEvents="none">
              <line x1={pointer.px} x2={pointer.px} y1={0} y2={plotHeight} />
              <line x1={0} x2={width} y1={pointer.py} y2={pointer.py} />
              <text x={pointer.px + 4} y={plotHeight - 6}>
                {`${formatSecondsTick(area.x.invert(pointer.px), xStep / 100)} s`}
              </text>
              <text x={4} y={pointer.py - 4}>
                {props.yTickFormat(
                  area.y.invert(pointer.py),
                  yStep === undefined ? undefined : yStep / 100,
                  yTop,
                )}
              </text>
            </g>
          )}
          {drag && (
            <rect
              className="chart-zoom-box"
              x={Math.min(drag.start, drag.current)}
              width={Math.abs(drag.current - drag.start)}
              y={0}
              height={plotHeight}
            />
          )}
        </g>
      </svg>
      {hover && pointer && !drag && (
        <Tooltip
          item={hover}
          left={MARGIN.left + area.x(hover.time)}
          top={MARGIN.top + area.y(hover.value)}
          containerWidth={outerWidth}
        />
      )}
    </div>
  );
}
