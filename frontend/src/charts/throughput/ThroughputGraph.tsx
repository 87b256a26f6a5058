import { useMemo } from "react";
import { formatDuration } from "../../format/units";
import type { FlowGraphProps } from "../flow/types";
import { ChartFrame } from "../frame/ChartFrame";
import { EvidenceShading } from "../frame/Evidence";
import { Legend } from "../frame/Legend";
import { MARGIN } from "../frame/types";
import { lowerBound } from "../lod/visibleRange";
import { formatRate, rateAxis } from "../numbers";
import { ackLine } from "../tcptrace/layers";
import { padded } from "../tcptrace/TcptraceGraph";
import { advanceRate, bytesSentCumulative, niceBinWidth } from "./bins";
import { rateLayer, THROUGHPUT_COLORS } from "./layers";

/** About one bin per this many pixels. */
const PIXELS_PER_BIN = 8;

export function ThroughputGraph(props: FlowGraphProps) {
  const { data, acks, view } = props;
  const sent = useMemo(() => bytesSentCumulative(data), [data]);
  const acked = useMemo(() => ackLine(acks), [acks]);
  const plotWidth = 900 - MARGIN.left - MARGIN.right;
  const width = niceBinWidth(view.to - view.from, plotWidth / PIXELS_PER_BIN);
  const throughput = useMemo(
    () => advanceRate(data.time, sent.values, view.from, view.to, width),
    [data, sent, view.from, view.to, width],
  );
  const goodput = useMemo(
    () => advanceRate(acks.time, acked, view.from, view.to, width),
    [acks, acked, view.from, view.to, width],
  );
  const layers = useMemo(
    () => [
      rateLayer("throughput", throughput, THROUGHPUT_COLORS.throughput, true),
      rateLayer("goodput", goodput, THROUGHPUT_COLORS.goodput, false),
    ],
    [throughput, goodput],
  );
  const yDomain = useMemo((): [number, number] => {
    let high = 0;
    for (const r of throughput.rate) if (r > high) high = r;
    for (const r of goodput.rate) if (r > high) high = r;
    return [0, high > 0 ? high * 1.08 : 1];
  }, [throughput, goodput]);
  const throughputLabel = sent.includesRetransmissions
    ? "Throughput (all bytes sent)"
    : "Throughput (new bytes sent)";

  return (
    <figure className="chart-figure" data-graph="throughput">
      <ChartFrame
        label={`Throughput and goodput of ${props.senderLabel}`}
        bounds={props.bounds}
        view={view}
        onViewChange={props.onViewChange}
        yDomain={yDomain}
        yLabel={`rate (bit/s, per ${formatDuration(width)} bin)`}
        yTickFormat={rateAxis}
        layers={layers}
        annotations={(area) => (
          <EvidenceShading
            ranges={props.evidence}
            area={area}
            onSelect={(r) => props.onViewChange(padded(r.span.from, r.span.to, props.bounds))}
          />
        )}
        nearest={(area, px) => {
          const t = area.x.invert(px);
          const b = lowerBound(throughput.start, t + 1e-12) - 1;
          if (b < 0) return null;
          const tp = throughput.rate[b] as number;
          const gp = goodput.rate[b] as number;
          return {
            time: (throughput.start[b] as number) + width / 2,
            value: Number.isFinite(tp) ? tp : 0,
            color: THROUGHPUT_COLORS.throughput,
            title: `${(throughput.start[b] as number).toFixed(6)} s + ${formatDuration(width)}`,
            lines: [
              `throughput ${formatRate(tp)}: bytes put on the wire${sent.includesRetransmissions ? ", retransmissions included" : ""}`,
              `goodput ${formatRate(gp)}: bytes the receiver acknowledged`,
            ],
          };
        }}
        onPick={() => undefined}
        dataAttributes={{ "data-testid": "graph-throughput" }}
      />
      <Legend
        entries={[
          {
            key: "throughput",
            label: throughputLabel,
            color: THROUGHPUT_COLORS.throughput,
            shape: "area",
            meaning: "payload bytes the sender transmitted per second",
          },
          {
            key: "goodput",
            label: "Goodput (acknowledged)",
            color: THROUGHPUT_COLORS.goodput,
            shape: "line",
            meaning: "bytes acknowledged per second: what the application got across",
          },
        ]}
      />
    </figure>
  );
}
