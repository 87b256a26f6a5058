import { useMemo } from "react";
import { formatDuration } from "../../format/units";
import type { FlowGraphProps } from "../flow/types";
import { ChartFrame } from "../frame/ChartFrame";
import { EvidenceShading } from "../frame/Evidence";
import { Legend } from "../frame/Legend";
import { closest } from "../frame/nearest";
import { visibleRange } from "../lod/visibleRange";
import { durationAxis } from "../numbers";
import { padded } from "../tcptrace/TcptraceGraph";
import { RTT_KIND_STYLES, RTT_KINDS } from "./kinds";
import { RTT_SUMMARY_COLORS, referenceLayer, rttLayer } from "./layers";

export function RttGraph(props: FlowGraphProps) {
  const { acks, view, handshakeRtt, rttSummary } = props;
  const layers = useMemo(
    () => [
      referenceLayer("handshake-rtt", handshakeRtt, RTT_KIND_STYLES.handshake_syn.color, [6, 4]),
      referenceLayer(
        "median-rtt",
        rttSummary?.median ?? Number.NaN,
        RTT_SUMMARY_COLORS.median,
        [2, 3],
      ),
      referenceLayer("p95-rtt", rttSummary?.p95 ?? Number.NaN, RTT_SUMMARY_COLORS.p95, [2, 3]),
      rttLayer(acks),
    ],
    [acks, handshakeRtt, rttSummary],
  );
  const samples = useMemo(() => acks.rtt.some(Number.isFinite), [acks]);
  const yDomain = useMemo((): [number, number] => {
    const { lo, hi } = visibleRange(acks.time, view.from, view.to);
    let high = Math.max(
      Number.isFinite(handshakeRtt) ? handshakeRtt : 0,
      rttSummary ? rttSummary.p95 : 0,
    );
    for (let i = lo; i < hi; i++) {
      const r = acks.rtt[i] as number;
      if (r > high) high = r;
    }
    return [0, high > 0 ? high * 1.1 : 0.001];
  }, [acks, view.from, view.to, handshakeRtt, rttSummary]);

  return (
    <figure className="chart-figure" data-graph="rtt">
      {!samples ? (
        <p className="chart-note" role="note">
          Per-segment RTT samples are not in this flow's series yet: the lines are the handshake
          round trip
          {Number.isFinite(handshakeRtt) ? ` (${formatDuration(handshakeRtt)})` : " (not captured)"}
          {rttSummary
            ? ` and the analysis's median (${formatDuration(rttSummary.median)}) and 95th percentile (${formatDuration(rttSummary.p95)}) RTT`
            : ""}
          .
        </p>
      ) : null}
      <ChartFrame
        label={`Round-trip time samples of ${props.senderLabel}`}
        bounds={props.bounds}
        view={view}
        onViewChange={props.onViewChange}
        yDomain={yDomain}
        yLabel="round-trip time of each sample"
        yTickFormat={durationAxis}
        layers={layers}
        annotations={(area) => (
          <EvidenceShading
            ranges={props.evidence}
            area={area}
            onSelect={(r) => props.onViewChange(padded(r.span.from, r.span.to, props.bounds))}
          />
        )}
        nearest={(area, px, py) => {
          const { lo, hi } = visibleRange(acks.time, area.x.invert(px - 8), area.x.invert(px + 8));
          const candidates = [];
          for (let i = lo; i < hi; i++) {
            const r = acks.rtt[i] as number;
            if (Number.isFinite(r))
              candidates.push({ px: area.x(acks.time[i] as number), py: area.y(r), item: i });
          }
          const i = closest(candidates, px, py);
          if (i === null) return null;
          const style = RTT_KIND_STYLES[RTT_KINDS[acks.rttKind[i] as number] ?? "data_ack"];
          return {
            time: acks.time[i] as number,
            value: acks.rtt[i] as number,
            color: style.color,
            title: `RTT ${formatDuration(acks.rtt[i] as number)} — ${style.label}`,
            lines: [
              style.meaning,
              `completed at t = ${(acks.time[i] as number).toFixed(6)} s · frame ${acks.frame[i]}`,
            ],
            frame: acks.frame[i] as number,
          };
        }}
        onPick={props.onPick}
        dataAttributes={{ "data-testid": "graph-rtt" }}
      />
      <Legend
        entries={[
          ...(["data_ack", "timestamp", "handshake_syn"] as const).map((k) => ({
            key: k,
            label: RTT_KIND_STYLES[k].label,
            color: RTT_KIND_STYLES[k].color,
            shape: k === "handshake_syn" ? ("area" as const) : ("dot" as const),
            meaning: RTT_KIND_STYLES[k].meaning,
          })),
          {
            key: "median",
            label: "Median RTT",
            color: RTT_SUMMARY_COLORS.median,
            shape: "dash",
            meaning: "the flow's median round trip (tcplens analysis)",
          },
          {
            key: "p95",
            label: "95th percentile RTT",
            color: RTT_SUMMARY_COLORS.p95,
            shape: "dash",
            meaning: "95 % of round trips were shorter; far above the median means queueing",
          },
          {
            key: "handshake",
            label: "Handshake RTT",
            color: RTT_KIND_STYLES.handshake_syn.color,
            shape: "dash",
            meaning: "SYN → SYN/ACK → ACK as seen at the capture point",
          },
        ]}
      />
    </figure>
  );
}
