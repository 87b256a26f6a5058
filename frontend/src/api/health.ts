import { getJson } from "./client";

/** `GET /api/v1/health` (tcplens/api/health.py). */
export interface Health {
  status: "ok";
  version: string;
  database: "ok";
}

export function fetchHealth(signal?: AbortSignal): Promise<Health> {
  return getJson<Health>("/health", signal ? { signal } : {});
}
