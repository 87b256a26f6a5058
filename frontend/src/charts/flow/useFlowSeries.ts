// Both directions of a flow for the graphs, at the level of detail the view needs: the whole flow
// once (the overview, reduced by the server when long), then, when zoomed into a reduced flow, the
// rows of the window (plus half a window each side, so a pan does not refetch at once).

import { useEffect, useRef, useState } from "react";
import type { Direction, DirectionSeries } from "../series/columns";
import { arrivedSeries, fetchSeries } from "../series/fetchSeries";
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

async function fetchBoth(
  capturePath: string,
  flowId: number,
  range: TimeView | null,
  maxPoints: number,
  signal: AbortSignal,
): Promise<FlowSeries> {
  const [c2s, s2c] = await Promise.all(
    DIRECTIONS.map((direction) =>
      fetchSeries({ capturePath, flowId, direction, range, maxPoints }, signal),
    ),
  );
  return {
    client_to_server: c2s as DirectionSeries,
    server_to_client: s2c as DirectionSeries,
    range,
  };
}

/** The whole flow if both directions have already arrived (requested early, fetchSeries.ts). */
function arrivedOverview(
  capturePath: string,
  flowId: number,
  maxPoints: number,
): FlowSeries | null {
  const [c2s, s2c] = DIRECTIONS.map((direction) =>
    arrivedSeries({ capturePath, flowId, direction, range: null, maxPoints }),
  );
  return c2s && s2c ? { client_to_server: c2s, server_to_client: s2c, range: null } : null;
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
  capturePath: string,
  flowId: number,
  view: TimeView | null,
  maxPoints: number,
): SeriesState {
  const [overview, setOverview] = useState<FlowSeries | null>(() =>
    arrivedOverview(capturePath, flowId, maxPoints),
  );
  const [detail, setDetail] = useState<FlowSeries | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loadingDetail, setLoadingDetail] = useState(false);
  const pointsRef = useRef(maxPoints);
  pointsRef.current = maxPoints;

  useEffect(() => {
    const controller = new AbortController();
    const arrived = arrivedOverview(capturePath, flowId, pointsRef.current);
    setOverview((shown) =>
      arrived &&
      shown?.client_to_server === arrived.client_to_server &&
      shown.server_to_client === arrived.server_to_client
        ? shown
        : arrived,
    );
    setDetail(null);
    setError(null);
    if (arrived) return;
    fetchBoth(capturePath, flowId, null, pointsRef.current, controller.signal).then(
      setOverview,
      (e: unknown) => {
        if (!controller.signal.aborted) setError(e instanceof Error ? e.message : String(e));
      },
    );
    return () => controller.abort();
  }, [capturePath, flowId]);

  const needsDetail =
    overview !== null && view !== null && isReduced(overview) && !detailServes(detail, view);
  useEffect(() => {
    if (!needsDetail || !view) return;
    const controller = new AbortController();
    const span = view.to - view.from;
    const range = { from: view.from - span / 2, to: view.to + span / 2 };
    const timer = window.setTimeout(() => {
      setLoadingDetail(true);
      // Three view spans are fetched, so ask for three times the points.
      fetchBoth(capturePath, flowId, range, pointsRef.current * 3, controller.signal)
        .then(setDetail, () => undefined)
        .finally(() => {
          if (!controller.signal.aborted) setLoadingDetail(false);
        });
    }, DETAIL_DEBOUNCE_MS);
    return () => {
      window.clearTimeout(timer);
      controller.abort();
    };
  }, [needsDetail, view, capturePath, flowId]);

  if (error) return { status: "error", message: error };
  if (!overview) return { status: "loading" };
  // A covering detail is never coarser than the overview: keep showing it while a finer one loads
  // (switching back and forth would also redo every derived array of the graphs).
  const shown = view && detailCovers(detail, view) ? detail : overview;
  return { status: "ready", overview, shown, loadingDetail };
}
