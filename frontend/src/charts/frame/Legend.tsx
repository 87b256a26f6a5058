import { memo } from "react";

// The legend: one entry per layer or mark kind, with the words that explain it (the same words as
// the tooltips) and, for marks, how many there are in view.

/** A symbol drawn as the graph draws its marks: an SVG path centred in the 18 × 12 box. */
export interface LegendPath {
  readonly d: string;
  readonly stroked: boolean;
}

/** The legend's box is 18 × 12 px: a mark's glyph is centred on this point of it. */
export const LEGEND_CENTRE = { x: 9, y: 6 } as const;

export interface LegendEntry {
  readonly key: string;
  readonly label: string;
  readonly color: string;
  readonly meaning: string;
  readonly shape: "line" | "bar" | "dot" | "area" | "tick" | "dash" | LegendPath;
  readonly count?: number;
}

export const Legend = memo(function Legend(props: { entries: readonly LegendEntry[] }) {
  return (
    <ul className="chart-legend" aria-label="Legend">
      {props.entries.map((e) => (
        <li key={e.key} title={e.meaning} data-legend={e.key}>
          <svg width="18" height="12" aria-hidden="true">
            <LegendGlyph shape={e.shape} color={e.color} />
          </svg>
          <span>{e.label}</span>
          {e.count !== undefined ? <span className="chart-legend-count">×{e.count}</span> : null}
        </li>
      ))}
    </ul>
  );
}, sameEntries);

function sameEntries(
  a: { entries: readonly LegendEntry[] },
  b: { entries: readonly LegendEntry[] },
): boolean {
  return (
    a.entries.length === b.entries.length &&
    a.entries.every(
      (e, i) =>
        e.key === b.entries[i]?.key &&
        e.count === b.entries[i]?.count &&
        e.label === b.entries[i]?.label,
    )
  );
}

function LegendGlyph(props: { shape: LegendEntry["shape"]; color: string }) {
  const { color, shape } = props;
  if (typeof shape === "object") {
    return shape.stroked ? (
      <path d={shape.d} stroke={color} strokeWidth="2" fill="none" data-glyph="path" />
    ) : (
      <path d={shape.d} fill={color} data-glyph="path" />
    );
  }
  switch (shape) {
    case "line":
      return <path d="M1 9 H7 V3 H17" stroke={color} strokeWidth="2" fill="none" />;
    case "dash":
      return <path d="M1 6 H17" stroke={color} strokeWidth="2" strokeDasharray="4 2" />;
    case "bar":
      return <path d="M9 1 V11 M6 1 H12 M6 11 H12" stroke={color} strokeWidth="1.5" />;
    case "dot":
      return <circle cx="9" cy="6" r="3.5" fill={color} />;
    case "tick":
      return <path d="M9 2 V10" stroke={color} strokeWidth="2" />;
    case "area":
      return <rect x="1" y="1" width="16" height="10" fill={color} opacity="0.35" />;
  }
}
