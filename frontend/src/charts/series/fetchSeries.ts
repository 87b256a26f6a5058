// The series endpoint (GET …/flows/{flow}/series): one direction of one flow between `from` and
// `to`, reduced by the server to about `max_points` rows plus every row carrying an event mark,
// as TanStack Query options. The first request of a flow page (the whole flow, both directions)
// starts as soon as the script runs, before the app has asked who is signed in and rendered
// (prefetchFlowOverview): it is most of the wait for the first graph, and the page's query finds
// it in the cache.

import { type QueryClient, queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../../api/http";
import { type CaptureScope, scopeKey } from "../../api/scope";
import type { TimeView } from "../view";
import {
  type Direction,
  type DirectionSeries,
  type SeriesResponse,
  seriesFromColumns,
} from "./columns";

/**
 * Rows the server may return per direction: about 16 per pixel of plot width. The whole flow at
 * this resolution is stored at analysis time (tcplens/storage/series.py OVERVIEW_POINTS), so the
 * first request of a flow page is a file read on the server.
 */
export const MAX_POINTS = 16_000;

export interface SeriesRequest {
  readonly scope: CaptureScope;
  readonly flowId: number;
  readonly direction: Direction;
  readonly range: TimeView | null;
  readonly maxPoints: number;
}

function seriesQuery(request: SeriesRequest) {
  return {
    direction: request.direction,
    max_points: Math.max(2, Math.round(request.maxPoints)),
    ...(request.range ? { from: request.range.from, to: request.range.to } : {}),
  };
}

async function requestSeries(
  request: SeriesRequest,
  signal: AbortSignal,
): Promise<DirectionSeries> {
  const { scope, flowId } = request;
  const query = seriesQuery(request);
  const body =
    scope.kind === "capture"
      ? await unwrap(
          api.GET("/api/v1/captures/{capture_id}/flows/{flow_id}/series", {
            params: { path: { capture_id: scope.captureId, flow_id: flowId }, query },
            signal,
          }),
        )
      : await unwrap(
          api.GET("/api/v1/shared/{token}/flows/{flow_id}/series", {
            params: { path: { token: scope.token, flow_id: flowId }, query },
            signal,
          }),
        );
  return seriesFromColumns(request.direction, body as unknown as SeriesResponse);
}

/** The query of one direction's series: a result never changes for one analysis, so never stale. */
export function seriesQueryOptions(request: SeriesRequest) {
  return queryOptions({
    queryKey: [
      ...scopeKey(request.scope),
      "series",
      request.flowId,
      request.direction,
      request.range?.from ?? null,
      request.range?.to ?? null,
      Math.round(request.maxPoints),
    ] as const,
    queryFn: ({ signal }) => requestSeries(request, signal),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 60_000,
  });
}

/** The capture scope and flow of a flow page's path (`/captures/{id}/flows/{n}`, `/shared/…`). */
export function flowPageOf(pathname: string): { scope: CaptureScope; flowId: number } | null {
  const match = /^\/(captures|shared)\/([^/]+)\/flows\/(\d+)\/?$/.exec(pathname);
  if (!match) return null;
  const flowId = Number(match[3]);
  if (!(flowId > 0)) return null;
  const key = decodeURIComponent(match[2] as string);
  const scope: CaptureScope =
    match[1] === "captures" ? { kind: "capture", captureId: key } : { kind: "shared", token: key };
  return { scope, flowId };
}

/** On a flow page, start its whole-flow series queries, both directions, into `client`. */
export function prefetchFlowOverview(client: QueryClient, pathname: string): void {
  const page = flowPageOf(pathname);
  if (!page) return;
  for (const direction of ["client_to_server", "server_to_client"] as const) {
    // A failure (signed out, no such flow) is the page's to report when its query asks.
    void client.prefetchQuery(
      seriesQueryOptions({ ...page, direction, range: null, maxPoints: MAX_POINTS }),
    );
  }
}
