// Both directions of a flow for the graphs, at the level of detail the view needs: the whole flow
// once (the overview, reduced by the server when long), then, when zoomed into a reduced flow, the
// rows of the window (plus half a window each side, so a pan does not refetch at once).

import { useQueries } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { errorMessage } from "../../api/http";
import type { CaptureScope } from "../../api/scope";
import type { Direction, DirectionSeries } from "../series/columns";
import { seriesQueryOptions } from "../series/fetchSeries";
import type { TimeView } from "../view";

export interface FlowSeries {
  readonly client_to_server: DirectionSeries;
  readonly server_to_client: DirectionSeries;
  /** The range the detail covers; null for the overview (the whole flow). */
  readonly range: TimeView | null;
}

export type SeriesState =
  | { status: "loading" }
  | { status: "error"; message: string }
  | { status: "ready"; overview: FlowSeries; shown: FlowSeries; loadingDetail: boolean };

const DIRECTIONS: readonly Direction[] = ["client_to_server", "server_to_client"];
/** A detail fetch waits for the view to rest this long (wheel and drag send many views). */
export const DETAIL_DEBOUNCE_MS = 160;

/**
 * Both directions' queries of one range (null: the whole flow), as one FlowSeries (the same object
 * until an answer changes: the graphs derive their arrays from it). While another range loads,
 * the last one that arrived is returned, with its own range.
 */
function useBoth(
  scope: CaptureScope,
  flowId: number,
  range: TimeView | null,
  maxPoints: number,
  enabled: boolean,
) {
  const [c2s, s2c] = useQueries({
    queries: DIRECTIONS.map((direction) => ({
      ...seriesQueryOptions({ scope, flowId, direction, range, maxPoints }),
      enabled,
    })),
  });
  const c2sData = c2s?.data;
  const s2cData = s2c?.data;
  const arrived = useMemo(
    (): FlowSeries | null =>
      c2sData && s2cData ? { client_to_server: c2sData, server_to_client: s2cData, range } : null,
    [c2sData, s2cData, range],
  );
  const last = useRef<FlowSeries | null>(null);
  if (arrived) last.current = arrived;
  return {
    series: arrived ?? last.current,
    error: c2s?.error ?? s2c?.error ?? null,
    fetching: Boolean(c2s?.isFetching || s2c?.isFetching),
  };
}

/** Whether `detail` covers `view` (then it is at least as fine as the overview there). */
export function detailCovers(detail: FlowSeries | null, view: TimeView): detail is FlowSeries {
  return detail?.range != null && detail.range.from <= view.from && detail.range.to >= view.to;
}

/** Whether `detail` covers `view` at the resolution the view deserves (zoomed in 4× more: refetch). */
export function detailServes(detail: FlowSeries | null, view: TimeView): detail is FlowSeries {
  return (
    detailCovers(detail, view) &&
    (detail.range as TimeView).to - (detail.range as TimeView).from <= (view.to - view.from) * 4
  );
}

export function isReduced(series: FlowSeries): boolean {
  return series.client_to_server.reduced || series.server_to_client.reduced;
}

export function useFlowSeries(
  scope: CaptureScope,
  flowId: number,
  view: TimeView | null,
  maxPoints: number,
): SeriesState {
  const overview = useBoth(scope, flowId, null, maxPoints, true);
  // The detail range follows the view once it has rested, with half a view each side so a pan
  // does not refetch at once; kept while it still serves the view.
  const [range, setRange] = useState<TimeView | null>(null);
  const needsDetail =
    overview.series !== null &&
    view !== null &&
    isReduced(overview.series) &&
    !detailServes(range === null ? null : { ...overview.series, range }, view);
  useEffect(() => {
    if (!needsDetail || !view) return;
    const span = view.to - view.from;
    const timer = window.setTimeout(
      () => setRange({ from: view.from - span / 2, to: view.to + span / 2 }),
      DETAIL_DEBOUNCE_MS,
    );
    return () => window.clearTimeout(timer);
  }, [needsDetail, view]);
  // Three view spans are fetched, so ask for three times the points.
  const detail = useBoth(scope, flowId, range, maxPoints * 3, range !== null);

  if (overview.error) return { status: "error", message: errorMessage(overview.error) };
  if (!overview.series) return { status: "loading" };
  const withRange = detail.series;
  // A covering detail is never coarser than the overview: keep showing it while a finer one loads
  // (switching back and forth would also redo every derived array of the graphs).
  const shown = view && detailCovers(withRange, view) ? withRange : overview.series;
  return {
    status: "ready",
    overview: overview.series,
    shown,
    loadingDetail: range !== null && detail.fetching,
  };
}
