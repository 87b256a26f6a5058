// Links into the flow page (owned by the graphs feature) and the names of its URL parameters.
// Every view's state lives in the URL so that a link shows a teammate exactly what you see;
// the names are agreed with the graphs feature (see /work/notes/from-frontend-to-graphs.md).

import { type CaptureScope, scopePage } from "../api/scope";

export type GraphKind = "tcptrace" | "stevens" | "throughput" | "rtt" | "inflight";
export type Direction = "client_to_server" | "server_to_client";

export interface FlowView {
  graph?: GraphKind | undefined;
  direction?: Direction | undefined;
  /** Seconds from the capture's first packet (the clock of findings' evidence ranges). */
  from?: number | undefined;
  to?: number | undefined;
  /** Rank of the finding to highlight. */
  finding?: number | undefined;
}

export function flowPageHref(scope: CaptureScope, flowId: number, view: FlowView = {}): string {
  const params = new URLSearchParams();
  if (view.graph) params.set("graph", view.graph);
  if (view.direction) params.set("direction", view.direction);
  if (view.from !== undefined) params.set("from", secondsParam(view.from));
  if (view.to !== undefined) params.set("to", secondsParam(view.to));
  if (view.finding !== undefined) params.set("finding", String(view.finding));
  const query = params.toString();
  return `${scopePage(scope)}/flows/${flowId}${query ? `?${query}` : ""}`;
}

/** Microsecond precision is plenty for a time range and keeps URLs short. */
function secondsParam(seconds: number): string {
  return String(Number.parseFloat(seconds.toFixed(6)));
}
