// Server state of captures and their results, as TanStack Query hooks.

import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "./http";
import { type CaptureScope, scopeKey } from "./scope";
import type { Capture, CaptureListQuery, CapturePage, Finding, Flow, FlowPage } from "./types";

/** Poll a capture this often while it is queued or being analysed. */
export const ANALYSIS_POLL_MS = 500;

export function isSettled(capture: Pick<Capture, "status"> | undefined): boolean {
  return capture?.status === "done" || capture?.status === "failed";
}

export function fetchCapture(scope: CaptureScope, signal: AbortSignal | null): Promise<Capture> {
  return scope.kind === "capture"
    ? unwrap(
        api.GET("/api/v1/captures/{capture_id}", {
          params: { path: { capture_id: scope.captureId } },
          signal,
        }),
      )
    : unwrap(
        api.GET("/api/v1/shared/{token}", { params: { path: { token: scope.token } }, signal }),
      );
}

/** The capture, polled until its analysis has finished or failed. */
export function useCapture(scope: CaptureScope) {
  return useQuery({
    queryKey: [...scopeKey(scope), "capture"],
    queryFn: ({ signal }) => fetchCapture(scope, signal),
    refetchInterval: (query) => (isSettled(query.state.data) ? false : ANALYSIS_POLL_MS),
  });
}

/** Every flow of the capture (the table sorts and filters them in the browser). */
export const FLOW_LIMIT = 5000;

export function useFlows(scope: CaptureScope, enabled: boolean) {
  return useQuery({
    queryKey: [...scopeKey(scope), "flows"],
    enabled,
    queryFn: ({ signal }): Promise<FlowPage> => {
      const query = { limit: FLOW_LIMIT, sort: "id" as const, order: "asc" as const };
      return scope.kind === "capture"
        ? unwrap(
            api.GET("/api/v1/captures/{capture_id}/flows", {
              params: { path: { capture_id: scope.captureId }, query },
              signal,
            }),
          )
        : unwrap(
            api.GET("/api/v1/shared/{token}/flows", {
              params: { path: { token: scope.token }, query },
              signal,
            }),
          );
    },
  });
}

/** One flow by its id (the flow page: any flow, not only those of the table's first page). */
export function useFlow(scope: CaptureScope, flowId: number, enabled: boolean) {
  return useQuery({
    queryKey: [...scopeKey(scope), "flow", flowId],
    enabled,
    queryFn: ({ signal }): Promise<Flow> =>
      scope.kind === "capture"
        ? unwrap(
            api.GET("/api/v1/captures/{capture_id}/flows/{flow_id}", {
              params: { path: { capture_id: scope.captureId, flow_id: flowId } },
              signal,
            }),
          )
        : unwrap(
            api.GET("/api/v1/shared/{token}/flows/{flow_id}", {
              params: { path: { token: scope.token, flow_id: flowId } },
              signal,
            }),
          ),
  });
}

export function useFindings(scope: CaptureScope, enabled: boolean) {
  return useQuery({
    queryKey: [...scopeKey(scope), "findings"],
    enabled,
    queryFn: ({ signal }): Promise<Finding[]> =>
      scope.kind === "capture"
        ? unwrap(
            api.GET("/api/v1/captures/{capture_id}/findings", {
              params: { path: { capture_id: scope.captureId } },
              signal,
            }),
          )
        : unwrap(
            api.GET("/api/v1/shared/{token}/findings", {
              params: { path: { token: scope.token } },
              signal,
            }),
          ),
  });
}

/**
 * One page of the workspace's captures as `view` sorts and filters them (features/captures/
 * listView.ts). While a row is queued or being analysed the page is read again every
 * LIST_POLL_MS; each such row also follows its own capture query (useCapture), the one the upload
 * tray follows, so a row and the tray never disagree.
 */
export const LIST_POLL_MS = 2000;

export function useCaptureList(workspaceId: string | undefined, view: CaptureListQuery) {
  return useQuery({
    queryKey: ["captures", workspaceId ?? "default", view],
    queryFn: ({ signal }): Promise<CapturePage> =>
      unwrap(
        api.GET("/api/v1/captures", {
          params: { query: { ...view, ...(workspaceId ? { workspace_id: workspaceId } : {}) } },
          signal,
        }),
      ),
    // A new page keeps the old rows on screen until it arrives (no flash of a skeleton).
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data?.items.some((c) => !isSettled(c)) ? LIST_POLL_MS : false,
  });
}

/** Delete captures, all of them or none (POST /captures/delete). */
export function useDeleteCaptures() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (captureIds: readonly string[]) =>
      unwrap(api.POST("/api/v1/captures/delete", { body: { ids: [...captureIds] } })),
    onSettled: () => client.invalidateQueries({ queryKey: ["captures"] }),
  });
}
