// Both captures' sequence graphs of one matched transfer, stacked on the same time axis (seconds
// from each transfer's start) and zoomed together: the existing Stevens graph, fed with the
// transfer's flows chained into one series (transferSeries.ts).

import { useQuery } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import type { ComparedTransfer } from "../../api/types";
import { queryClient } from "../../app/queryClient";
import { Skeleton } from "../../app/Skeleton";
import type { Direction } from "../../charts/series/columns";
import { MAX_POINTS, seriesQueryOptions } from "../../charts/series/fetchSeries";
import { StevensGraph } from "../../charts/stevens/StevensGraph";
import { clampView, type TimeView } from "../../charts/view";
import { formatDuration } from "../../format/units";
import { type FlowPart, transferSeries } from "./transferSeries";

const DIRECTIONS: readonly Direction[] = ["client_to_server", "server_to_client"];
/** Flows drawn per capture: enough for a series of requests, bounded for the browser. */
const MAX_FLOWS = 50;

async function flowParts(captureId: string, flows: readonly number[]): Promise<FlowPart[]> {
  const scope = { kind: "capture" as const, captureId };
  return Promise.all(
    flows.slice(0, MAX_FLOWS).map(async (flowId) => {
      const [c2s, s2c] = await Promise.all(
        DIRECTIONS.map((direction) =>
          queryClient.fetchQuery(
            seriesQueryOptions({
              scope,
              flowId,
              direction,
              range: null,
              maxPoints: MAX_POINTS / 4,
            }),
          ),
        ),
      );
      return { client_to_server: c2s, server_to_client: s2c } as FlowPart;
    }),
  );
}

function useTransferSeries(captureId: string, flows: readonly number[], start: number) {
  return useQuery({
    queryKey: ["compare-series", captureId, flows.join(","), start],
    // Each flow's series is its own query in the app's cache (shared with the flow pages).
    queryFn: async () => transferSeries(await flowParts(captureId, flows), start),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function TransferGraphs({
  before,
  after,
  transfer: t,
}: {
  before: string;
  after: string;
  transfer: ComparedTransfer;
}) {
  const b = useTransferSeries(before, t.before_flows, t.before_start_s);
  const a = useTransferSeries(after, t.after_flows, t.after_start_s);
  // one axis for both: from the start to the longer of the two, with a little air
  const bounds = useMemo(
    (): TimeView => ({ from: 0, to: Math.max(t.before_s, t.after_s) * 1.02 + 1e-4 }),
    [t.before_s, t.after_s],
  );
  const [view, setView] = useState<TimeView>(bounds);
  const onViewChange = useCallback((next: TimeView) => setView(clampView(next, bounds)), [bounds]);
  const ignore = useCallback(() => {}, []);

  const graph = (label: string, state: typeof b, seconds: number, connections: number) => (
    <div className="compare-graph" data-testid={`compare-graph-${label.toLowerCase()}`}>
      <h3 className="compare-graph__title">
        {label}: {formatDuration(seconds)}, {connections} connection{connections === 1 ? "" : "s"}
      </h3>
      {state.isPending ? (
        <Skeleton className="skeleton--compare-chart" label={`Loading ${label}`} />
      ) : state.isError ? (
        <p className="panel panel--error">{String(state.error)}</p>
      ) : (
        <StevensGraph
          data={state.data}
          acks={state.data}
          handshakeRtt={Number.NaN}
          rttSummary={null}
          senderLabel={`${t.server} (${label.toLowerCase()})`}
          bounds={bounds}
          view={view}
          onViewChange={onViewChange}
          evidence={[]}
          bottleneckRate={null}
          onPick={ignore}
          timeLabel="time since the transfer's start (s)"
        />
      )}
    </div>
  );

  return (
    <div className="compare-graphs">
      {graph("Before", b, t.before_s, t.before_connections)}
      {graph("After", a, t.after_s, t.after_connections)}
    </div>
  );
}
