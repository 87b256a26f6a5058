// A finding's evidence on the graph: its time ranges shaded, labelled above the plot with the
// finding's numbers ("window full ×420"). Clicking a label zooms to the range.

import type { EvidenceRange } from "../flow/types";
import type { PlotArea } from "./types";

const SEVERITY_COLORS: Readonly<Record<string, string>> = {
  high: "var(--error)",
  medium: "var(--warn)",
  low: "var(--info)",
  info: "var(--fg-subtle)",
};

/** Ranges narrower than this get no edge lines (twenty thin ranges would be a barcode). */
const EDGE_MIN_PX = 40;
/** Width of a label's character (12 px bold sans-serif, generous) and the gap between labels. */
const LABEL_CHAR_PX = 7.4;
const LABEL_GAP_PX = 14;

export function evidenceColor(severity: string): string {
  return SEVERITY_COLORS[severity] ?? "var(--fg-subtle)";
}

export function EvidenceShading(props: {
  ranges: readonly EvidenceRange[];
  area: PlotArea;
  onSelect: (range: EvidenceRange) => void;
}) {
  const { area } = props;
  const [from, to] = area.x.domain() as [number, number];
  let lastLabelEnd = Number.NEGATIVE_INFINITY;
  const labelled = new Set<number>();
  return (
    <g className="chart-evidence" data-testid="evidence">
      {props.ranges.map((r) => {
        if (r.to < from || r.from > to) return null;
        const x0 = Math.max(0, area.x(r.from));
        const x1 = Math.min(area.width, area.x(r.to));
        const color = evidenceColor(r.severity);
        // Labels sit in the margin above the plot; one that would overlap the previous is dropped
        // (the shading and the tooltip of the finding list still say it).
        const labelX = Math.max(0, x0);
        // One label per finding, on its first range in view.
        const showLabel = !labelled.has(r.finding) && labelX > lastLabelEnd + LABEL_GAP_PX;
        if (showLabel) {
          labelled.add(r.finding);
          lastLabelEnd = labelX + r.label.length * LABEL_CHAR_PX;
        }
        return (
          <g
            key={r.key}
            data-evidence={r.label}
            className={r.highlighted ? "chart-evidence-highlighted" : undefined}
          >
            <rect
              className="chart-evidence-range"
              x={x0}
              width={Math.max(2, x1 - x0)}
              y={0}
              height={area.height}
              fill={color}
            />
            {r.from >= from && x1 - x0 >= EDGE_MIN_PX ? (
              <line
                className="chart-evidence-edge"
                x1={x0}
                x2={x0}
                y1={0}
                y2={area.height}
                stroke={color}
              />
            ) : null}
            {r.to <= to && x1 - x0 >= EDGE_MIN_PX ? (
              <line
                className="chart-evidence-edge"
                x1={x1}
                x2={x1}
                y1={0}
                y2={area.height}
                stroke={color}
              />
            ) : null}
            {showLabel ? (
              // biome-ignore lint/a11y/useSemanticElements: an SVG label cannot be a <button>
              <text
                className="chart-evidence-label"
                role="button"
                tabIndex={0}
                x={labelX + 2}
                y={-6}
                fill={color}
                onPointerDown={(e) => e.stopPropagation()}
                onPointerUp={(e) => e.stopPropagation()}
                onClick={() => props.onSelect(r)}
                onKeyDown={(e) => {
                  if (e.key === "Enter") props.onSelect(r);
                }}
              >
                {r.label}
              </text>
            ) : null}
          </g>
        );
      })}
    </g>
  );
}
