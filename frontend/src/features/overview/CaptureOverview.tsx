import { useMemo } from "react";
import { useSearchParams } from "react-router";
import { useCapture, useFindings, useFlows } from "../../api/captures";
import { errorMessage, isNotFound } from "../../api/http";
import type { CaptureScope } from "../../api/scope";
import type { Capture } from "../../api/types";
import { NotFound } from "../../app/NotFound";
import { Skeleton } from "../../app/Skeleton";
import { Diagnosis } from "../diagnosis/Diagnosis";
import { FlowTable } from "../flow-table/FlowTable";
import { flowRow } from "../flow-table/fromApi";
import { useTableView } from "../flow-table/useTableView";
import { ShareLinkUnavailable } from "../shared/ShareLinkUnavailable";
import { shareLinkProblem } from "../shared/shareLinkProblem";
import { ProgressView } from "../upload/ProgressView";
import { analysisState } from "../upload/progressState";
import { connectionTimelines } from "../waterfall/timelines";
import { Waterfall } from "../waterfall/Waterfall";
import { CaptureHeader } from "./CaptureHeader";
import { numberFact } from "./captureFacts";

/** One capture: the diagnosis first, then every connection, then the table of flows. */
export function CaptureOverview({ scope }: { scope: CaptureScope }) {
  const capture = useCapture(scope);
  if (capture.isPending) return <OverviewSkeleton />;
  if (capture.isError) {
    const dead = scope.kind === "shared" ? shareLinkProblem(capture.error) : null;
    if (dead) return <ShareLinkUnavailable problem={dead} />;
    return isNotFound(capture.error) ? (
      <NotFound what="capture" />
    ) : (
      <div className="panel panel--error" role="alert">
        {errorMessage(capture.error)}
      </div>
    );
  }
  return (
    <div className="overview">
      <CaptureHeader scope={scope} capture={capture.data} />
      {capture.data.status === "done" ? (
        <Results scope={scope} capture={capture.data} />
      ) : (
        <section className="panel analysis-panel" aria-label="Analysis progress">
          <ProgressView state={analysisState(capture.data)} label={capture.data.filename} />
        </section>
      )}
    </div>
  );
}

function Results({ scope, capture }: { scope: CaptureScope; capture: Capture }) {
  const flows = useFlows(scope, true);
  const findings = useFindings(scope, true);
  const [view, setView] = useTableView();
  // "Show more findings" is view state too: in the URL, so a link shows the same list.
  const [params, setParams] = useSearchParams();
  const allFindings = params.get("findings") === "all";
  const setAllFindings = () =>
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        next.set("findings", "all");
        return next;
      },
      { replace: true },
    );
  const rows = useMemo(() => (flows.data?.items ?? []).map(flowRow), [flows.data]);
  const timelines = useMemo(
    () => connectionTimelines(flows.data?.items ?? [], findings.data ?? []),
    [flows.data, findings.data],
  );
  const durationS =
    numberFact(capture, "duration_s") ?? Math.max(0, ...timelines.map((t) => t.endS));

  return (
    <>
      {findings.isPending ? (
        <Skeleton className="skeleton--diagnosis" label="Loading the diagnosis" />
      ) : findings.isError ? (
        <div className="panel panel--error" role="alert">
          {errorMessage(findings.error)}
        </div>
      ) : (
        <Diagnosis
          scope={scope}
          findings={findings.data}
          showAll={allFindings}
          onShowAll={setAllFindings}
        />
      )}
      <section className="section" aria-labelledby="connections-title">
        <h2 id="connections-title" className="section-title">
          Connections
          {flows.data && <span className="section-title__count num">{flows.data.total}</span>}
        </h2>
        {flows.isPending ? (
          <Skeleton className="skeleton--waterfall" label="Loading the connections" />
        ) : flows.isError ? (
          <div className="panel panel--error" role="alert">
            {errorMessage(flows.error)}
          </div>
        ) : (
          <Waterfall scope={scope} timelines={timelines} durationS={durationS} />
        )}
      </section>
      <section className="section" aria-labelledby="flows-title">
        <h2 id="flows-title" className="section-title">
          Flows
        </h2>
        {flows.isPending ? (
          <Skeleton className="skeleton--table" label="Loading the flows" />
        ) : flows.isError ? null : (
          <>
            {flows.data.total > rows.length && (
              <p className="muted">
                This capture has {flows.data.total.toLocaleString("en")} flows; the table holds the
                first {rows.length.toLocaleString("en")} by first packet.
              </p>
            )}
            <FlowTable scope={scope} rows={rows} view={view} onViewChange={setView} />
          </>
        )}
      </section>
    </>
  );
}

function OverviewSkeleton() {
  return (
    <div className="overview" aria-busy="true">
      <Skeleton className="skeleton--header" label="Loading the capture" />
      <Skeleton className="skeleton--diagnosis" label="" />
      <Skeleton className="skeleton--waterfall" label="" />
    </div>
  );
}
