// The series endpoint (GET …/flows/{flow}/series): one direction of one flow between `from` and
// `to`, reduced by the server to about `max_points` rows plus every row carrying an event mark.
// The first request of a flow page (the whole flow, both directions) starts as soon as the script
// runs, before the app has asked who is signed in and rendered: it is most of the wait for the
// first graph.

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
  /** API path of the capture: `/api/v1/captures/{id}` or `/api/v1/shared/{token}`. */
  readonly capturePath: string;
  readonly flowId: number;
  readonly direction: Direction;
  readonly range: TimeView | null;
  readonly maxPoints: number;
}

export class SeriesError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function seriesUrl(request: SeriesRequest): string {
  const query = new URLSearchParams({
    direction: request.direction,
    max_points: String(Math.max(2, Math.round(request.maxPoints))),
  });
  if (request.range) {
    query.set("from", String(request.range.from));
    query.set("to", String(request.range.to));
  }
  return `${request.capturePath}/flows/${request.flowId}/series?${query}`;
}

/** Requests started before anyone asked for them, by URL (see prefetchFlowOverview). */
const early = new Map<string, { answer: Promise<DirectionSeries>; value?: DirectionSeries }>();
/** An early answer nobody took by then is dropped (the page went elsewhere). */
const EARLY_KEPT_MS = 30_000;

export function fetchSeries(
  request: SeriesRequest,
  signal?: AbortSignal,
): Promise<DirectionSeries> {
  return early.get(seriesUrl(request))?.answer ?? requestSeries(request, signal);
}

/** The early answer to `request` if it has already arrived: a page can draw on its first render. */
export function arrivedSeries(request: SeriesRequest): DirectionSeries | undefined {
  return early.get(seriesUrl(request))?.value;
}

/**
 * When `pathname` is a flow page (`/captures/{id}/flows/{n}` or `/shared/{token}/flows/{n}`),
 * starts its whole-flow series requests, both directions, for fetchSeries to pick up.
 */
export function prefetchFlowOverview(pathname: string): void {
  const match = /^\/(captures|shared)\/([^/]+)\/flows\/(\d+)\/?$/.exec(pathname);
  if (!match) return;
  const flowId = Number(match[3]);
  if (!(flowId > 0)) return;
  for (const direction of ["client_to_server", "server_to_client"] as const) {
    const request: SeriesRequest = {
      capturePath: `/api/v1/${match[1]}/${match[2]}`,
      flowId,
      direction,
      range: null,
      maxPoints: MAX_POINTS,
    };
    const url = seriesUrl(request);
    const entry: { answer: Promise<DirectionSeries>; value?: DirectionSeries } = {
      answer: requestSeries(request),
    };
    // A failure (signed out, no such flow) is the page's to report when it asks; until then it
    // must not surface as an unhandled rejection.
    entry.answer.then(
      (value) => {
        entry.value = value;
      },
      () => undefined,
    );
    early.set(url, entry);
    setTimeout(() => early.delete(url), EARLY_KEPT_MS);
  }
}

async function requestSeries(
  request: SeriesRequest,
  signal?: AbortSignal,
): Promise<DirectionSeries> {
  const response = await fetch(seriesUrl(request), {
    headers: { Accept: "application/json" },
    credentials: "same-origin",
    ...(signal ? { signal } : {}),
  });
  if (!response.ok) {
    let detail = `the server answered ${response.status}`;
    try {
      const problem = (await response.json()) as { detail?: string; title?: string };
      detail = problem.detail || problem.title || detail;
    } catch {
      // not a problem document
    }
    throw new SeriesError(detail, response.status);
  }
  return seriesFromColumns(request.direction, (await response.json()) as SeriesResponse);
}
