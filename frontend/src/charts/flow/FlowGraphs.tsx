// The graphs of one flow: graph and direction pickers, zoom reset, exports, and the graph itself.
// Every choice is a prop that the page keeps in the URL (graph, direction, from, to).

import { useCallback, useMemo, useRef } from "react";
import { formatDuration } from "../../format/units";
import { download, frameToPng, frameToSvg } from "../frame/exportImage";
import type { HoverItem } from "../frame/types";
import { InflightGraph } from "../inflight/InflightGraph";
import { RttGraph } from "../rtt/RttGraph";
import type { Direction } from "../series/columns";
import { rowsInView, rowsToCsv } from "../series/exportRows";
import { StevensGraph } from "../stevens/StevensGraph";
import { TcptraceGraph } from "../tcptrace/TcptraceGraph";
import { ThroughputGraph } from "../throughput/ThroughputGraph";
import { clampView, type TimeView } from "../view";
import { bottleneckRate, evidenceRanges, type FindingEvidence } from "./evidence";
import type { FlowGraphProps } from "./types";
import type { SeriesState } from "./useFlowSeries";

export const GRAPHS = {
  tcptrace: { label: "Time-sequence (tcptrace)", component: TcptraceGraph },
  stevens: { label: "Sequence (Stevens)", component: StevensGraph },
  throughput: { label: "Throughput", component: ThroughputGraph },
  rtt: { label: "RTT", component: RttGraph },
  inflight: { label: "In flight vs window", component: InflightGraph },
} as const;
export type GraphKind = keyof typeof GRAPHS;

export function isGraphKind(value: string | null): value is GraphKind {
  return value !== null && value in GRAPHS;
}

export interface FlowGraphsProps {
  readonly series: SeriesState;
  readonly flowId: number;
  readonly graph: GraphKind;
  readonly direction: Direction;
  readonly view: TimeView | null;
  readonly onGraph: (graph: GraphKind) => void;
  readonly onDirection: (direction: Direction) => void;
  readonly onView: (view: TimeView | null) => void;
  readonly client: string;
  readonly server: string;
  readonly handshakeRtt: number;
  readonly rttSummary: { readonly median: number; readonly p95: number } | null;
  readonly findings: readonly FindingEvidence[];
  /** Rank of the finding the URL points at (`finding=`), or null. */
  readonly highlightFinding: number | null;
  readonly onPickFrame: (frame: number) => void;
}

export function FlowGraphs(props: FlowGraphsProps) {
  const state = props.series;
  const figureRef = useRef<HTMLDivElement>(null);
  const { onView, onPickFrame } = props;

  const bounds = useMemo((): TimeView | null => {
    if (state.status !== "ready") return null;
    const { client_to_server: a, server_to_client: b } = state.overview;
    const firsts = [a.time[0], b.time[0]].filter((t): t is number => t !== undefined);
    const lasts = [a.time[a.length - 1], b.time[b.length - 1]].filter(
      (t): t is number => t !== undefined,
    );
    if (firsts.length === 0) return null;
    const from = Math.min(...firsts);
    const to = Math.max(...lasts);
    // A little air at the right so the last segment is not drawn on the frame.
    return { from, to: to + Math.max((to - from) * 0.01, 1e-4) };
  }, [state]);

  const onViewChange = useCallback(
    (next: TimeView) => {
      if (!bounds) return;
      const v = clampView(next, bounds);
      onView(v.from <= bounds.from && v.to >= bounds.to ? null : v);
    },
    [bounds, onView],
  );
  const onPick = useCallback(
    (item: HoverItem) => {
      if (item.frame) onPickFrame(item.frame);
    },
    [onPickFrame],
  );

  if (state.status === "loading") {
    return (
      <div className="chart-placeholder" aria-busy="true">
        Loading the flow's packets…
      </div>
    );
  }
  if (state.status === "error") {
    return (
      <div className="chart-placeholder chart-error" role="alert">
        The graphs could not be loaded: {state.message}
      </div>
    );
  }
  if (!bounds) {
    return <div className="chart-placeholder">This flow has no packets to draw.</div>;
  }

  const reverse: Direction =
    props.direction === "client_to_server" ? "server_to_client" : "client_to_server";
  const data = state.shown[props.direction];
  const acks = state.shown[reverse];
  const view = props.view ? clampView(props.view, bounds) : bounds;
  const [sender, receiver] =
    props.direction === "client_to_server"
      ? [props.client, props.server]
      : [props.server, props.client];
  const evidence = evidenceRanges(
    props.findings,
    props.flowId,
    state.overview[props.direction],
    state.overview[reverse],
    props.highlightFinding,
  );
  const graphProps: FlowGraphProps = {
    data,
    acks,
    handshakeRtt: props.handshakeRtt,
    rttSummary: props.rttSummary,
    senderLabel: `${sender} → ${receiver}`,
    bounds,
    view,
    onViewChange,
    evidence,
    bottleneckRate: bottleneckRate(props.findings, props.flowId),
    onPick,
  };
  const Graph = GRAPHS[props.graph].component;
  const baseName = `flow-${props.flowId}-${props.graph}-${props.direction}`;
  const frameElement = () => figureRef.current?.querySelector<HTMLElement>(".chart-frame") ?? null;

  const exportImage = async (kind: "png" | "svg") => {
    const frame = frameElement();
    if (!frame) return;
    if (kind === "svg")
      download(new Blob([frameToSvg(frame)], { type: "image/svg+xml" }), `${baseName}.svg`);
    else download(await frameToPng(frame), `${baseName}.png`);
  };
  const exportRows = (kind: "csv" | "json") => {
    const rows = rowsInView([data, acks], view.from, view.to);
    const blob =
      kind === "csv"
        ? new Blob([rowsToCsv(rows)], { type: "text/csv" })
        : new Blob([JSON.stringify(rows)], { type: "application/json" });
    download(blob, `${baseName}-${view.from.toFixed(3)}-${view.to.toFixed(3)}.${kind}`);
  };

  const zoomed = props.view !== null;
  return (
    <section className="flow-graphs" aria-label="Flow graphs">
      <div className="chart-toolbar">
        <div className="chart-tabs" role="tablist" aria-label="Graph">
          {(Object.keys(GRAPHS) as GraphKind[]).map((kind) => (
            <button
              key={kind}
              type="button"
              role="tab"
              aria-selected={kind === props.graph}
              className={kind === props.graph ? "chart-tab active" : "chart-tab"}
              onClick={() => props.onGraph(kind)}
            >
              {GRAPHS[kind].label}
            </button>
          ))}
        </div>
        <fieldset className="chart-direction">
          <legend className="visually-hidden">Direction</legend>
          {(["client_to_server", "server_to_client"] as const).map((d) => (
            <label key={d} className={d === props.direction ? "active" : ""}>
              <input
                type="radio"
                name="direction"
                value={d}
                checked={d === props.direction}
                onChange={() => props.onDirection(d)}
              />
              {d === "client_to_server" ? `client → server` : `server → client`}
            </label>
          ))}
        </fieldset>
      </div>
      <div className="chart-status">
        <span>
          {formatDuration(view.to - view.from)} shown
          {zoomed ? ` (${view.from.toFixed(3)} – ${view.to.toFixed(3)} s)` : " (whole flow)"}
          {data.reduced
            ? ` · ${data.length.toLocaleString("en-US")} of ${data.pointsInRange.toLocaleString("en-US")} packets drawn (level of detail)`
            : ""}
          {state.loadingDetail ? " · loading detail…" : ""}
        </span>
        <span className="chart-actions">
          <button
            type="button"
            onClick={() => onView(null)}
            disabled={!zoomed}
            title="Reset zoom (0, Esc, double-click)"
          >
            Reset zoom
          </button>
          <button type="button" onClick={() => exportImage("png")}>
            PNG
          </button>
          <button type="button" onClick={() => exportImage("svg")}>
            SVG
          </button>
          <button
            type="button"
            onClick={() => exportRows("csv")}
            title="The packets in view, both directions"
          >
            CSV
          </button>
          <button
            type="button"
            onClick={() => exportRows("json")}
            title="The packets in view, both directions"
          >
            JSON
          </button>
        </span>
      </div>
      <div ref={figureRef}>
        <Graph {...graphProps} />
      </div>
      <p className="chart-help">
        Drag to zoom into a time range · wheel to zoom · Shift+drag to pan · ← → pan · + − zoom · 0
        or double-click to reset · click a mark or a segment to open that packet
      </p>
    </section>
  );
}
