import { useLayoutEffect, useMemo, useRef, useState } from "react";
import { useNavigate } from "react-router";
import type { CaptureScope } from "../../api/scope";
import { formatDuration } from "../../format/units";
import { flowPageHref } from "../../routes/flowLink";
import {
  type ConnectionTimeline,
  formatSeconds,
  layoutWaterfall,
  type SegmentKind,
} from "./geometry";

const ROW_HEIGHT = 20;
const BAR_HEIGHT = 10;
const AXIS_HEIGHT = 22;
const LABEL_WIDTH = 200;
/** More rows than this stop being readable (and cost the browser); the table has them all. */
export const MAX_ROWS = 400;

const SEGMENT_LABEL: Record<SegmentKind, string> = {
  dns: "DNS lookup",
  handshake: "TCP handshake",
  transfer: "Transfer",
  idle: "Idle",
};

/** The width of an element, kept current with a ResizeObserver. */
function useWidth<T extends HTMLElement>(fallback: number) {
  const ref = useRef<T>(null);
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    setWidth(element.clientWidth || fallback);
    const observer = new ResizeObserver(([entry]) => {
      if (entry) setWidth(Math.round(entry.contentRect.width) || fallback);
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [fallback]);
  return [ref, width] as const;
}

export interface WaterfallProps {
  scope: CaptureScope;
  timelines: readonly ConnectionTimeline[];
  durationS: number;
}

/** Every connection on the capture's time axis, like a browser's network panel. */
export function Waterfall({ scope, timelines, durationS }: WaterfallProps) {
  const [ref, width] = useWidth<HTMLDivElement>(800);
  const navigate = useNavigate();
  const plotWidth = Math.max(120, width - LABEL_WIDTH - 16);
  const shown = useMemo(() => timelines.slice(0, MAX_ROWS), [timelines]);
  const layout = useMemo(
    () => layoutWaterfall(shown, { width: plotWidth, rowHeight: ROW_HEIGHT, durationS }),
    [shown, plotWidth, durationS],
  );
  const height = layout.height + AXIS_HEIGHT;

  return (
    <div className="waterfall" ref={ref}>
      <ul className="legend" aria-label="Segments">
        {(Object.keys(SEGMENT_LABEL) as SegmentKind[]).map((kind) => (
          <li key={kind}>
            <span className={`legend__swatch seg--${kind}`} aria-hidden="true" />
            {SEGMENT_LABEL[kind]}
          </li>
        ))}
      </ul>
      {timelines.length > shown.length && (
        <p className="waterfall__note">
          The first {shown.length} of {timelines.length} connections, in order of their first
          packet; the flow table below lists them all.
        </p>
      )}
      <div className="waterfall__scroll">
        <svg
          width={width}
          height={height}
          role="img"
          aria-label={`Waterfall of ${timelines.length} connections over ${formatSeconds(durationS)}`}
        >
          <g transform={`translate(${LABEL_WIDTH}, 0)`}>
            {layout.ticks.map((tick) => (
              <g key={tick.x} transform={`translate(${tick.x}, 0)`}>
                <line className="waterfall__grid" y1={AXIS_HEIGHT - 4} y2={height} />
                <text className="waterfall__tick" y={12} textAnchor="middle">
                  {tick.label}
                </text>
              </g>
            ))}
          </g>
          <g transform={`translate(0, ${AXIS_HEIGHT})`}>
            {layout.rows.map((row) => {
              const href = flowPageHref(scope, row.flowId);
              return (
                <g
                  key={row.flowId}
                  className="waterfall__row"
                  transform={`translate(0, ${row.y})`}
                  data-flow={row.flowId}
                >
                  <a
                    href={href}
                    onClick={(event) => {
                      event.preventDefault();
                      void navigate(href);
                    }}
                  >
                    <rect className="waterfall__hit" width={width} height={ROW_HEIGHT} />
                    <text className="waterfall__label" x={8} y={ROW_HEIGHT / 2 + 4}>
                      <tspan className="waterfall__id">{row.flowId}</tspan>
                      <tspan dx={8}>{row.label}</tspan>
                    </text>
                    <g transform={`translate(${LABEL_WIDTH}, ${(ROW_HEIGHT - BAR_HEIGHT) / 2})`}>
                      {row.segments.map((segment) => (
                        <rect
                          key={`${segment.kind}-${segment.startS}`}
                          className={`seg--${segment.kind}`}
                          data-kind={segment.kind}
                          x={segment.x}
                          width={segment.width}
                          height={BAR_HEIGHT}
                          rx={2}
                        >
                          <title>
                            {`Flow ${row.flowId} · ${SEGMENT_LABEL[segment.kind]} ${formatDuration(
                              segment.endS - segment.startS,
                            )} (at ${formatSeconds(segment.startS)})`}
                          </title>
                        </rect>
                      ))}
                    </g>
                  </a>
                </g>
              );
            })}
          </g>
        </svg>
      </div>
    </div>
  );
}
