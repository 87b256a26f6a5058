// The flow page's view state in the URL (names agreed with routes/flowLink.ts): graph, direction,
// from/to (seconds from the capture's first packet) and frame (the packet open in the details).

import { type GraphKind, isGraphKind } from "../../charts/flow/FlowGraphs";
import type { Direction } from "../../charts/series/columns";
import { formatViewParam, parseView, type TimeView } from "../../charts/view";

export interface FlowView {
  readonly graph: GraphKind;
  readonly direction: Direction;
  readonly view: TimeView | null;
  readonly frame: number | null;
}

export function isDirection(value: string | null): value is Direction {
  return value === "client_to_server" || value === "server_to_client";
}

export function readFlowView(params: URLSearchParams, defaultDirection: Direction): FlowView {
  const graph = params.get("graph");
  const direction = params.get("direction");
  const frame = Number(params.get("frame"));
  return {
    graph: isGraphKind(graph) ? graph : "tcptrace",
    direction: isDirection(direction) ? direction : defaultDirection,
    view: parseView(params.get("from"), params.get("to")),
    frame: Number.isInteger(frame) && frame > 0 ? frame : null,
  };
}

/** The params after a change; other params (e.g. `finding`) are kept. */
export function writeFlowView(params: URLSearchParams, change: Partial<FlowView>): URLSearchParams {
  const next = new URLSearchParams(params);
  if (change.graph !== undefined) next.set("graph", change.graph);
  if (change.direction !== undefined) next.set("direction", change.direction);
  if (change.view !== undefined) {
    if (change.view === null) {
      next.delete("from");
      next.delete("to");
    } else {
      next.set("from", formatViewParam(change.view.from));
      next.set("to", formatViewParam(change.view.to));
    }
  }
  if (change.frame !== undefined) {
    if (change.frame === null) next.delete("frame");
    else next.set("frame", String(change.frame));
  }
  return next;
}

/** The direction that carried the most payload: the transfer a user came to look at. */
export function busiestDirection(
  summary: Readonly<Record<string, unknown>> | undefined,
): Direction {
  const bytes = summary?.bytes as
    | { client_to_server?: unknown; server_to_client?: unknown }
    | undefined;
  const c2s = typeof bytes?.client_to_server === "number" ? bytes.client_to_server : 0;
  const s2c = typeof bytes?.server_to_client === "number" ? bytes.server_to_client : 0;
  return s2c > c2s ? "server_to_client" : "client_to_server";
}
