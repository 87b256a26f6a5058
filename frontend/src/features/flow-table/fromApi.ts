// API flows → table rows. `summary` is DESIGN.md's flow object as JSON (untyped in the schema),
// so each field is read defensively: a missing or malformed value shows as unknown, never throws.

import type { Flow } from "../../api/types";
import type { FlowRow } from "./flowRows";

function numberAt(object: unknown, ...path: string[]): number | null {
  let value: unknown = object;
  for (const key of path) {
    if (!value || typeof value !== "object") return null;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function textAt(object: unknown, key: string): string | null {
  if (!object || typeof object !== "object") return null;
  const value = (object as Record<string, unknown>)[key];
  return typeof value === "string" && value ? value : null;
}

export function flowRow(flow: Flow): FlowRow {
  return {
    id: flow.id,
    client: flow.client,
    server: flow.server,
    startS: flow.start_s,
    durationS: flow.duration_s,
    bytesClientToServer: numberAt(flow.summary, "bytes", "client_to_server") ?? 0,
    bytesServerToClient: numberAt(flow.summary, "bytes", "server_to_client") ?? 0,
    throughputBps: Number.isFinite(flow.throughput_bps) ? flow.throughput_bps : null,
    handshakeRttMs: numberAt(flow.summary, "handshake_rtt_ms"),
    retransmissions: flow.retransmissions,
    limitingFactor: flow.limiting_factor ?? null,
    timeLostS: Number.isFinite(flow.time_lost_s) ? flow.time_lost_s : null,
    encapsulation: textAt(flow.summary, "encapsulation"),
  };
}

export { numberAt };
