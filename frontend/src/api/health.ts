import { api, unwrap } from "./http";
import type { components } from "./schema.gen";

/** `GET /api/v1/health` (tcplens/api/health.py). */
export type Health = components["schemas"]["Health"];

export function fetchHealth(signal?: AbortSignal): Promise<Health> {
  return unwrap(api.GET("/api/v1/health", signal ? { signal } : {}));
}
