// The series endpoint (GET …/flows/{flow}/series): one direction of one flow between `from` and
// `to`, reduced by the server to about `max_points` rows plus every row carrying an event mark.

import type { TimeView } from "../view";
import {
  type Direction,
  type DirectionSeries,
  type SeriesResponse,
  seriesFromColumns,
} from "./columns";

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

export async function fetchSeries(
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
