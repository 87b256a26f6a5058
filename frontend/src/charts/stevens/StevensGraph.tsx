import { useMemo } from "react";
import type { FlowGraphProps } from "../flow/types";
import { ChartFrame } from "../frame/ChartFrame";
import { EvidenceShading } from "../frame/Evidence";
import { Legend } from "../frame/Legend";
import { closest } from "../frame/nearest";
import { visibleRange } from "../lod/visibleRange";
import { bytesAxis, formatBytesExact } from "../numbers";
import { padded } from "../tcptrace/TcptraceGraph";
import { STEVENS_COLORS, stevensLayer } from "./layers";

export function StevensGraph(props: FlowGraphProps) {
  const { data, view } = props;
  const layers = useMemo(() => [stevensLayer(data)], [data]);
  const yDomain = useMemo((): [number, number] => {
    const { lo, hi } = visibleRange(data.time, view.from, view.to);
    let low = Number.POSITIVE_INFINITY;
    let high = Number.NEGATIVE_INFINITY;
    for (let i = lo; i < hi; i++) {
      if (!((data.payloadLen[i] as number) > 0)) continue;
      const s = data.seq[i] as number;
      if (s < low) low = s;
      if (s > high) high = s;
    }
    if (!Number.isFinite(low)) return [0, 1];
    const pad = Math.max(1, (high - low) * 0.04);
    return [Math.max(0, low - pad), high + pad];
  }, [data, view.from, view.to]);

  return (
    <figure className="chart-figure" data-graph="stevens">
      <ChartFrame
        label={`Sequence numbers over time (Stevens) of ${props.senderLabel}`}
        bounds={props.bounds}
        view={view}
        onViewChange={props.onViewChange}
        yDomain={yDomain}
        yLabel="relative sequence number (bytes)"
        yTickFormat={bytesAxis}
        layers={layers}
        annotations={(area) => (
          <EvidenceShading
            ranges={props.evidence}
            area={area}
            onSelect={(r) => props.onViewChange(padded(r.span.from, r.span.to, props.bounds))}
          />
        )}
        nearest={(area, px, py) => {
          const { lo, hi } = visibleRange(data.time, area.x.invert(px - 8), area.x.invert(px + 8));
          const candidates = [];
          for (let i = lo; i < hi; i++) {
            if ((data.payloadLen[i] as number) > 0) {
              candidates.push({
                px: area.x(data.time[i] as number),
                py: area.y(data.seq[i] as number),
                item: i,
              });
            }
          }
          const i = closest(candidates, px, py);
          if (i === null) return null;
          const again = data.resent[i] === 1;
          return {
            time: data.time[i] as number,
            value: data.seq[i] as number,
            color: again ? STEVENS_COLORS.retransmission : STEVENS_COLORS.data,
            title: again ? "Retransmitted segment" : "Data segment",
            lines: [
              again
                ? "red dot: a segment sent again"
                : "blue dot: a segment's first byte — the slope is the sending rate",
              `seq ${(data.seq[i] as number).toLocaleString("en-US")} (${formatBytesExact(data.payloadLen[i] as number)})`,
              `t = ${(data.time[i] as number).toFixed(6)} s · frame ${data.frame[i]}`,
            ],
            frame: data.frame[i] as number,
          };
        }}
        onPick={props.onPick}
        dataAttributes={{ "data-testid": "graph-stevens" }}
        {...(props.timeLabel ? { xLabel: props.timeLabel } : {})}
      />
      <Legend
        entries={[
          {
            key: "data",
            label: "Segment (first byte)",
            color: STEVENS_COLORS.data,
            shape: "dot",
            meaning: "one dot per data segment: steeper means faster",
          },
          {
            key: "retransmission",
            label: "Retransmission",
            color: STEVENS_COLORS.retransmission,
            shape: "dot",
            meaning: "a segment sent again",
          },
        ]}
      />
    </figure>
  );
}
