// Which capture a view reads, and through which door: a signed-in viewer reads
// /captures/{id}/…, anyone holding a share link reads /shared/{token}/… (read-only). The result
// endpoints are the same under both (tcplens/api/results.py registers each under both prefixes).

export type CaptureScope =
  | { kind: "capture"; captureId: string }
  | { kind: "shared"; token: string };

/** The API path of the scope's capture, without the /api/v1 prefix. */
export function scopePath(scope: CaptureScope): string {
  return scope.kind === "capture"
    ? `/captures/${encodeURIComponent(scope.captureId)}`
    : `/shared/${encodeURIComponent(scope.token)}`;
}

/** The SPA page of the scope's capture. */
export function scopePage(scope: CaptureScope): string {
  return scopePath(scope);
}

/** A stable key for TanStack Query caches. */
export function scopeKey(scope: CaptureScope): readonly [string, string] {
  return scope.kind === "capture" ? ["capture", scope.captureId] : ["shared", scope.token];
}
