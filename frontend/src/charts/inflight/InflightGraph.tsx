import { useMemo } from "react";
import { formatBytes, formatDuration } from "../../format/units";
import type { FlowGraphProps } from "../flow/types";
import { ChartFrame } from "../frame/ChartFrame";
import { EvidenceShading } from "../frame/Evidence";
import { Legend } from "../frame/Legend";
import { closest } from "../frame/nearest";
import { visibleRange } from "../lod/visibleRange";
import { bytesAxis, formatBytesExact, formatRate } from "../numbers";
import { ackLine } from "../tcptrace/layers";
import { padded } from "../tcptrace/TcptraceGraph";
import { advanceRate, niceBinWidth } from "../throughput/bins";
import { bandwidthDelayProduct, peakRate } from "./bdp";
import { advertisedWindowLayer, bdpLayer, INFLIGHT_COLORS, inflightLayer } from "./layers";

export function InflightGraph(props: FlowGraphProps) {
  const { data, acks, view, bounds } = props;
  const bdp = useMemo(() => {
    // The path's round trip: the handshake's (SYN → SYN/ACK → ACK spans both sides of the capture
    // point), else the analysis's median. Not the smallest sample: captured next to one end, an
    // ACK of that end comes back in microseconds and says nothing about the path.
    const rtt =
      props.handshakeRtt > 0 ? props.handshakeRtt : (props.rttSummary?.median ?? Number.NaN);
    if (!(rtt > 0)) return null;
    // The path's rate: the bottleneck a finding measured (the rate its label on this graph says),
    // else the peak goodput over bins of at least a few round trips, so one burst does not count.
    if (props.bottleneckRate !== null) return bandwidthDelayProduct(props.bottleneckRate / 8, rtt);
    const width = Math.max(niceBinWidth(bounds.to - bounds.from, 100), rtt * 4);
    const rates = advanceRate(acks.time, ackLine(acks), bounds.from, bounds.to, width).rate;
    return bandwidthDelayProduct(peakRate(rates), rtt);
  }, [acks, bounds.from, bounds.to, props.handshakeRtt, props.rttSummary, props.bottleneckRate]);
  const layers = useMemo(
    () => [advertisedWindowLayer(acks), bdpLayer(bdp), inflightLayer(data)],
    [acks, data, bdp],
  );
  const yDomain = useMemo((): [number, number] => {
    let high = bdp ? bdp.bytes : 0;
    const d = visibleRange(data.time, view.from, view.to);
    for (let i = d.lo; i < d.hi; i++) {
      const v = data.bytesInFlight[i] as number;
      if (v > high) high = v;
    }
    const a = visibleRange(acks.time, view.from, view.to);
    for (let i = a.lo; i < a.hi; i++) {
      const w = acks.window[i] as number;
      if (w > high) high = w;
    }
    return [0, high > 0 ? high * 1.08 : 1];
  }, [data, acks, view.from, view.to, bdp]);

  return (
    <figure className="chart-figure" data-graph="inflight">
      <ChartFrame
        label={`Bytes in flight and receive window of ${props.senderLabel}`}
        bounds={bounds}
        view={view}
        onViewChange={props.onViewChange}
        yDomain={yDomain}
        yLabel="bytes in flight and window (bytes)"
        yTickFormat={bytesAxis}
        layers={layers}
        annotations={(area) => (
          <>
            <EvidenceShading
              ranges={props.evidence}
              area={area}
              onSelect={(r) => props.onViewChange(padded(r.span.from, r.span.to, bounds))}
            />
            {bdp ? (
              <text
                className="chart-line-label"
                x={area.width - 4}
                y={area.y(bdp.bytes) - 5}
                textAnchor="end"
                fill={INFLIGHT_COLORS.bdp}
              >
                {`BDP ${formatBytes(bdp.bytes)} = ${formatRate(bdp.rate)} × ${formatDuration(bdp.rtt)}`}
              </text>
            ) : null}
          </>
        )}
        nearest={(area, px, py) => {
          const { lo, hi } = visibleRange(data.time, area.x.invert(px - 8), area.x.invert(px + 8));
          const candidates = [];
          for (let i = lo; i < hi; i++) {
            const v = data.bytesInFlight[i] as number;
            if (Number.isFinite(v))
              candidates.push({ px: area.x(data.time[i] as number), py: area.y(v), item: i });
          }
          const i = closest(candidates, px, py);
          if (i === null) return null;
          return {
            time: data.time[i] as number,
            value: data.bytesInFlight[i] as number,
            color: INFLIGHT_COLORS.inflight,
            title: `${formatBytesExact(data.bytesInFlight[i] as number)} in flight`,
            lines: [
              "blue: bytes sent and not yet acknowledged after this segment (SACKed bytes excluded)",
              "pinned at the yellow window line = the receiver's window limits the transfer",
              `t = ${(data.time[i] as number).toFixed(6)} s · frame ${data.frame[i]}`,
            ],
            frame: data.frame[i] as number,
          };
        }}
        onPick={props.onPick}
        dataAttributes={{
          "data-testid": "graph-inflight",
          ...(bdp
            ? {
                "data-bdp-bytes": String(Math.round(bdp.bytes)),
                "data-bdp-rate-bps": String(Math.round(bdp.rate * 8)),
              }
            : {}),
        }}
      />
      <Legend
        entries={[
          {
            key: "inflight",
            label: "Bytes in flight",
            color: INFLIGHT_COLORS.inflight,
            shape: "line",
            meaning: "sent and not yet acknowledged",
          },
          {
            key: "window",
            label: "Advertised receive window",
            color: INFLIGHT_COLORS.window,
            shape: "line",
            meaning: "how much the receiver allows in flight",
          },
          {
            key: "bdp",
            label: "Bandwidth-delay product",
            color: INFLIGHT_COLORS.bdp,
            shape: "dash",
            meaning:
              props.bottleneckRate !== null
                ? "the bottleneck rate the diagnosis measured × the round trip: the window the path needs"
                : "peak goodput × the round trip: the window the path needs",
          },
        ]}
      />
    </figure>
  );
}
