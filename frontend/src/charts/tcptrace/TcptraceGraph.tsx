// tcptrace's time-sequence graph (Shawn Ostermann's tcptrace -S; Wireshark's "tcptrace" stream
// graph): the sender's segments as vertical bars, the receiver's ACK line and window edge as steps,
// SACK blocks, and the Wireshark expert events as marks.

import { useMemo } from "react";
import type { FlowGraphProps } from "../flow/types";
import { ChartFrame } from "../frame/ChartFrame";
import { EvidenceShading } from "../frame/Evidence";
import { LEGEND_CENTRE, Legend, type LegendEntry } from "../frame/Legend";
import { lowerBound, upperBound } from "../lod/visibleRange";
import { bytesAxis } from "../numbers";
import { SACK_MEANING, tcptraceHover } from "./hover";
import {
  ackLayer,
  ackLine,
  receiveWindowLayer,
  sackLayer,
  segmentsLayer,
  sequenceExtent,
  TCPTRACE_COLORS,
  windowEdge,
} from "./layers";
import { legendGlyph, MAX_SVG_MARKS, MarksSvg, marksCanvasLayer, marksInView } from "./MarksLayer";
import {
  countMarks,
  MARK_STYLES,
  type MarkKind,
  markCountAttributes,
  tcptraceMarks,
} from "./marks";
import { sackBlocks } from "./sack";

/** The kinds of mark the legend lists, each with the glyph the graph draws it with. */
const LEGEND_MARKS: readonly MarkKind[] = [
  "retransmission",
  "window_full",
  "zero_window",
  "duplicate_ack",
  "zero_window_probe",
  "out_of_order",
  "lost_segment",
];

export function TcptraceGraph(props: FlowGraphProps) {
  const { data, acks, view } = props;
  const edge = useMemo(() => windowEdge(acks), [acks]);
  const ackValues = useMemo(() => ackLine(acks), [acks]);
  const marks = useMemo(() => tcptraceMarks(data, acks), [data, acks]);
  const sacks = useMemo(() => sackBlocks(acks), [acks]);
  const sackTimes = useMemo(() => Float64Array.from(sacks, (b) => b.time), [sacks]);
  const sacksInView = useMemo(
    () => sacks.slice(lowerBound(sackTimes, view.from), upperBound(sackTimes, view.to)),
    [sacks, sackTimes, view.from, view.to],
  );
  const markTimes = useMemo(() => Float64Array.from(marks, (m) => m.time), [marks]);
  const visible = useMemo(
    () => marksInView(marks, markTimes, view.from, view.to),
    [marks, markTimes, view.from, view.to],
  );
  const counts = useMemo(() => countMarks(visible), [visible]);
  const yDomain = useMemo(
    () => sequenceExtent(data, acks, edge, view.from, view.to),
    [data, acks, edge, view.from, view.to],
  );
  const layers = useMemo(
    () => [
      receiveWindowLayer(acks, edge),
      ackLayer(acks, ackValues),
      sackLayer(sacks, sackTimes),
      segmentsLayer(data),
      marksCanvasLayer(marks, markTimes),
    ],
    [data, acks, edge, ackValues, marks, markTimes, sacks, sackTimes],
  );

  const legend: LegendEntry[] = [
    {
      key: "data",
      label: "Data segments",
      color: TCPTRACE_COLORS.data,
      shape: "bar",
      meaning: "blue bar: bytes sent, from seq to seq + len",
    },
    {
      key: "ack",
      label: "ACK",
      color: TCPTRACE_COLORS.ack,
      shape: "line",
      meaning: "green step: data acknowledged by the receiver",
    },
    {
      key: "window",
      label: "Receive window (ack + rwnd)",
      color: TCPTRACE_COLORS.window,
      shape: "line",
      meaning: "yellow step: the highest byte the receiver allows the sender to send",
    },
    {
      key: "sack",
      label: "SACK blocks",
      color: TCPTRACE_COLORS.sack,
      shape: "bar",
      meaning: SACK_MEANING,
      count: sacksInView.length,
    },
    // Only the kinds of mark present in the view (a row of "×0" says nothing), except the
    // retransmissions, whose absence is worth saying.
    ...LEGEND_MARKS.filter((kind) => kind === "retransmission" || counts[kind] > 0).map((kind) => ({
      key: kind,
      label: kind === "retransmission" ? "Retransmissions" : MARK_STYLES[kind].label,
      color: MARK_STYLES[kind].color,
      shape: legendGlyph(kind, LEGEND_CENTRE.x, LEGEND_CENTRE.y),
      meaning: MARK_STYLES[kind].meaning,
      count: counts[kind],
    })),
  ];

  return (
    <figure className="chart-figure" data-graph="tcptrace">
      <ChartFrame
        label={`Time-sequence graph (tcptrace) of ${props.senderLabel}`}
        bounds={props.bounds}
        view={view}
        onViewChange={props.onViewChange}
        yDomain={yDomain}
        yLabel="relative sequence number (bytes)"
        yTickFormat={bytesAxis}
        layers={layers}
        annotations={(area) => (
          <>
            <EvidenceShading
              ranges={props.evidence}
              area={area}
              onSelect={(r) => props.onViewChange(padded(r.span.from, r.span.to, props.bounds))}
            />
            {visible.length <= MAX_SVG_MARKS ? <MarksSvg marks={visible} area={area} /> : null}
          </>
        )}
        nearest={(area, px, py) =>
          tcptraceHover(area, px, py, visible, sacksInView, data, acks, ackValues, edge)
        }
        onPick={props.onPick}
        dataAttributes={{
          "data-testid": "graph-tcptrace",
          ...markCountAttributes(counts),
          "data-sack-block-count": String(sacksInView.length),
          "data-points": String(data.length + acks.length),
        }}
      />
      <Legend entries={legend} />
    </figure>
  );
}

/** A range with 10 % of air on each side, so the evidence is not glued to the edges. */
export function padded(from: number, to: number, bounds: { from: number; to: number }) {
  const pad = Math.max((to - from) * 0.1, 1e-4);
  return { from: Math.max(bounds.from, from - pad), to: Math.min(bounds.to, to + pad) };
}
