// Captures for the flow-page specs, put in through the API (the upload screen has its own spec):
// sign up, upload the bytes, wait for the analysis, read what Wireshark said about the file.

import { readFileSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";
import { LAB, newEmail, signUpViaApi } from "./app";

const ORACLE_DIR = path.resolve(LAB, "..", "oracle");

export interface FlowSummary {
  readonly id: number;
  readonly client: string;
  readonly server: string;
  readonly bytes_total: number;
  readonly summary: { bytes?: { client_to_server: number; server_to_client: number } };
}

/** Signs up a fresh user in this request context; returns the CSRF token the upload needs. */
export async function signUp(request: APIRequestContext): Promise<string> {
  await signUpViaApi(request, newEmail("graphs"));
  const csrf = (await request.storageState()).cookies.find(
    (c) => c.name === "__Host-tcplens_csrf" || c.name === "tcplens_csrf",
  );
  if (!csrf) throw new Error("no CSRF cookie after sign-up");
  return csrf.value;
}

/** Uploads a file and waits until its analysis is done; returns the capture id. */
export async function uploadAndAnalyse(
  request: APIRequestContext,
  csrf: string,
  file: string,
  timeoutMs = 120_000,
): Promise<string> {
  const upload = await request.post(
    `/api/v1/captures?filename=${encodeURIComponent(path.basename(file))}`,
    {
      data: readFileSync(file),
      headers: { "Content-Type": "application/octet-stream", "X-CSRF-Token": csrf },
      timeout: timeoutMs,
    },
  );
  if (!upload.ok()) throw new Error(`upload failed: ${upload.status()} ${await upload.text()}`);
  const id = ((await upload.json()) as { capture: { id: string } }).capture.id;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const capture = (await (await request.get(`/api/v1/captures/${id}`)).json()) as {
      status: string;
    };
    if (capture.status === "done") return id;
    if (capture.status === "failed") throw new Error(`the analysis of ${file} failed`);
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`the analysis of ${file} did not finish in ${timeoutMs / 1000} s`);
}

export async function flowsOf(
  request: APIRequestContext,
  captureId: string,
): Promise<FlowSummary[]> {
  const page = (await (
    await request.get(`/api/v1/captures/${captureId}/flows?limit=5000`)
  ).json()) as {
    items: FlowSummary[];
  };
  return page.items;
}

/** Frames of one TCP stream that TShark flagged with `tcp.analysis.<flag>` (the oracle file). */
export function oracleCount(capture: string, stream: number, flag: string): number {
  const oracle = JSON.parse(
    readFileSync(path.join(ORACLE_DIR, capture.replace(/\.pcap$/, ".wireshark.json")), "utf8"),
  ) as { tcp_frames: Record<string, { stream: number; flags?: string[] }> };
  return Object.values(oracle.tcp_frames).filter(
    (f) => f.stream === stream && f.flags?.includes(flag),
  ).length;
}

/** Rows of one direction of a flow that carry an event, as the series endpoint reports them. */
/** Rows of a flow direction's series that re-send data (the `resent` column): what the graphs mark. */
export async function seriesResentCount(
  request: APIRequestContext,
  captureId: string,
  flowId: number,
  direction: string,
): Promise<number> {
  const response = await request.get(
    `/api/v1/captures/${captureId}/flows/${flowId}/series?direction=${direction}&max_points=100000`,
  );
  const body = (await response.json()) as { columns: { resent: number[] } };
  return body.columns.resent.filter((r) => r === 1).length;
}

export async function seriesEventCount(
  request: APIRequestContext,
  captureId: string,
  flowId: number,
  direction: string,
  kind: string,
): Promise<number> {
  const response = await request.get(
    `/api/v1/captures/${captureId}/flows/${flowId}/series?direction=${direction}&max_points=100000`,
  );
  const body = (await response.json()) as { event_kinds: string[]; columns: { events: number[] } };
  const bit = 2 ** body.event_kinds.indexOf(kind);
  return body.columns.events.filter((e) => Math.floor(e / bit) % 2 === 1).length;
}
