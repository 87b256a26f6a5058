import type { HoverItem } from "./types";

const TOOLTIP_WIDTH = 300;

/** The words for the item under the pointer, placed beside it and kept inside the graph. */
export function Tooltip(props: {
  item: HoverItem;
  left: number;
  top: number;
  containerWidth: number;
}) {
  const { item } = props;
  const flip = props.left + 16 + TOOLTIP_WIDTH > props.containerWidth;
  return (
    <div
      className="chart-tooltip"
      role="tooltip"
      style={{
        left: flip ? props.left - 16 - TOOLTIP_WIDTH : props.left + 16,
        top: Math.max(0, props.top - 12),
        width: TOOLTIP_WIDTH,
      }}
    >
      <div className="chart-tooltip-title">
        <span className="chart-swatch" style={{ background: item.color }} />
        {item.title}
      </div>
      {item.lines.map((line) => (
        <div key={line} className="chart-tooltip-line">
          {line}
        </div>
      ))}
      {item.frame ? (
        <div className="chart-tooltip-hint">
          click: open frame {item.frame} in the packet details
        </div>
      ) : null}
    </div>
  );
}
