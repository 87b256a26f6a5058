import { useMemo } from "react";
import { Link } from "react-router";
import { useCapture, useFindings, useFlow } from "../api/captures";
import { errorMessage, isNotFound } from "../api/http";
import { type CaptureScope, scopePage } from "../api/scope";
import type { Finding } from "../api/types";
import { Fact } from "../app/Fact";
import { NotFound } from "../app/NotFound";
import { Skeleton } from "../app/Skeleton";
import { Diagnosis } from "../features/diagnosis/Diagnosis";
import { FlowAnalysis } from "../features/flow/FlowAnalysis";
import { flowRow } from "../features/flow-table/fromApi";
import { ShareLinkUnavailable } from "../features/shared/ShareLinkUnavailable";
import { shareLinkProblem } from "../features/shared/shareLinkProblem";
import { factorLabel, formatBitRate, formatBytes, formatDuration, formatMs } from "../format/units";
import { useCaptureScope, useFlowId } from "./scopeRoutes";

/**
 * The page of one flow: where it sits in its capture, its numbers, the findings about it, then
 * the graphs and packets (features/flow, charts/, wiregasm/: issue 9).
 */
export function FlowPageRoute() {
  const scope = useCaptureScope();
  const flowId = useFlowId();
  if (flowId === null) return <NotFound what="flow" />;
  return <FlowPage key={`${JSON.stringify(scope)}-${flowId}`} scope={scope} flowId={flowId} />;
}

function FlowPage({ scope, flowId }: { scope: CaptureScope; flowId: number }) {
  const capture = useCapture(scope);
  const done = capture.data?.status === "done";
  const flowQuery = useFlow(scope, flowId, done);
  const findings = useFindings(scope, done);
  const flow = flowQuery.data;
  const about = useMemo<Finding[]>(
    () => (findings.data ?? []).filter((f) => f.flows.includes(flowId)),
    [findings.data, flowId],
  );

  if (capture.isError) {
    const dead = scope.kind === "shared" ? shareLinkProblem(capture.error) : null;
    if (dead) return <ShareLinkUnavailable problem={dead} />;
    return isNotFound(capture.error) ? (
      <NotFound what="capture" />
    ) : (
      <div className="panel panel--error">{errorMessage(capture.error)}</div>
    );
  }
  if (flowQuery.isError) {
    return isNotFound(flowQuery.error) ? (
      <NotFound what="flow" />
    ) : (
      <div className="panel panel--error">{errorMessage(flowQuery.error)}</div>
    );
  }
  const row = flow ? flowRow(flow) : null;

  return (
    <div className="flow-page">
      <nav className="breadcrumb" aria-label="Breadcrumb">
        <Link to={scopePage(scope)}>{capture.data?.filename ?? "Capture"}</Link>
        <span aria-hidden="true">›</span>
        <span aria-current="page">Flow {flowId}</span>
      </nav>
      {row ? (
        <header className="flow-header">
          <h1 className="flow-header__title mono">
            {row.client} <span className="flow-header__arrow">→</span> {row.server}
          </h1>
          <dl className="facts">
            <Fact label="Limited by" value={factorLabel(row.limitingFactor)} />
            <Fact label="Duration" value={formatDuration(row.durationS)} />
            <Fact
              label="Throughput"
              value={row.throughputBps === null ? "–" : formatBitRate(row.throughputBps)}
            />
            <Fact label="Bytes →" value={formatBytes(row.bytesClientToServer)} />
            <Fact label="Bytes ←" value={formatBytes(row.bytesServerToClient)} />
            <Fact
              label="Handshake RTT"
              value={row.handshakeRttMs === null ? "–" : formatMs(row.handshakeRttMs)}
            />
            <Fact label="Retransmissions" value={String(row.retransmissions)} />
          </dl>
        </header>
      ) : (
        <Skeleton className="skeleton--header" label="Loading the flow" />
      )}
      {findings.isSuccess && about.length > 0 && (
        <Diagnosis scope={scope} findings={about} showAll onShowAll={() => undefined} />
      )}
      <FlowAnalysis
        scope={scope}
        flowId={flowId}
        flow={flow}
        findings={findings.data ?? []}
        packetsAllowed={capture.data?.download_allowed ?? false}
      />
    </div>
  );
}
