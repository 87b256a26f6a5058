// The body of the flow page: the graphs with the findings' evidence on them and, below, the
// packets of the flow dissected by Wireshark in the browser. All view state is in the URL.

import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { type CaptureScope, scopePath } from "../../api/scope";
import type { FindingEvidence } from "../../charts/flow/evidence";
import { FlowGraphs } from "../../charts/flow/FlowGraphs";
import { useFlowSeries } from "../../charts/flow/useFlowSeries";
import { MAX_POINTS } from "../../charts/series/fetchSeries";
import { PacketDetails } from "../../wiregasm/PacketDetails";
import { busiestDirection, type FlowView, readFlowView, writeFlowView } from "./flowView";

/** A zoom or pan reaches the URL once the view has rested this long. */
export const URL_DELAY_MS = 300;

/** What the page reads of the API's flow (FlowOut). */
export interface FlowFacts {
  readonly client: string;
  readonly server: string;
  readonly summary?: Readonly<Record<string, unknown>>;
}

export function FlowAnalysis(props: {
  scope: CaptureScope;
  flowId: number;
  flow: FlowFacts | undefined;
  findings: readonly FindingEvidence[];
  /** Whether the viewer may have the packets (the capture's `download_allowed`). */
  packetsAllowed: boolean;
}) {
  const [params, setParams] = useSearchParams();
  const flowView = readFlowView(params, busiestDirection(props.flow?.summary));
  const capturePath = `/api/v1${scopePath(props.scope)}`;
  const findingParam = Number(params.get("finding") ?? Number.NaN);
  const highlightFinding = Number.isInteger(findingParam) ? findingParam : null;
  // The time window follows the pointer at once, and reaches the URL when the gesture rests:
  // browsers throttle history updates (a wheel sends dozens per second).
  const [view, setView] = useState(flowView.view);
  const urlFrom = flowView.view?.from;
  const urlTo = flowView.view?.to;
  useEffect(() => {
    setView(urlFrom === undefined || urlTo === undefined ? null : { from: urlFrom, to: urlTo });
  }, [urlFrom, urlTo]);
  const urlTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(urlTimer.current), []);
  const series = useFlowSeries(props.scope, props.flowId, view, MAX_POINTS);

  // Zoom and pan replace the history entry (a wheel gesture is not fifty back-button steps);
  // choosing a graph, a direction or a packet pushes one.
  const change = useCallback(
    (next: Partial<FlowView>, replace: boolean) =>
      setParams((old) => writeFlowView(old, next), { replace, preventScrollReset: true }),
    [setParams],
  );

  const rtt = props.flow?.summary?.handshake_rtt_ms;
  const rttMs = props.flow?.summary?.rtt_ms as
    | { median?: unknown; p95?: unknown }
    | null
    | undefined;
  const median = typeof rttMs?.median === "number" ? rttMs.median : null;
  const p95 = typeof rttMs?.p95 === "number" ? rttMs.p95 : null;
  const rttSummary = useMemo(
    () => (median !== null && p95 !== null ? { median: median / 1000, p95: p95 / 1000 } : null),
    [median, p95],
  );

  return (
    <div className="flow-analysis">
      <FlowGraphs
        series={series}
        flowId={props.flowId}
        graph={flowView.graph}
        direction={flowView.direction}
        view={view}
        onGraph={(graph) => change({ graph }, false)}
        onDirection={(direction) => change({ direction }, false)}
        onView={(next) => {
          setView(next);
          clearTimeout(urlTimer.current);
          urlTimer.current = setTimeout(() => change({ view: next }, true), URL_DELAY_MS);
        }}
        client={props.flow?.client ?? "client"}
        server={props.flow?.server ?? "server"}
        handshakeRtt={typeof rtt === "number" ? rtt / 1000 : Number.NaN}
        rttSummary={rttSummary}
        findings={props.findings}
        highlightFinding={highlightFinding}
        onPickFrame={(frame) => change({ frame }, false)}
      />
      <PacketDetails
        capturePath={capturePath}
        flowId={props.flowId}
        allowed={props.packetsAllowed}
        selected={flowView.frame}
        onSelect={(frame) => change({ frame }, false)}
      />
    </div>
  );
}
