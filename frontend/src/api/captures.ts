// Server state of captures and their results, as TanStack Query hooks.

import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "./http";
import { type CaptureScope, scopeKey } from "./scope";
import type { Capture, CapturePage, Finding, FlowPage } from "./types";

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

export function useCaptureList(workspaceId: string | undefined) {
  return useInfiniteQuery({
    queryKey: ["captures", workspaceId ?? "default"],
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }): Promise<CapturePage> =>
      unwrap(
        api.GET("/api/v1/captures", {
          params: {
            query: {
              limit: 50,
              ...(pageParam ? { cursor: pageParam } : {}),
              ...(workspaceId ? { workspace_id: workspaceId } : {}),
            },
          },
          signal,
        }),
      ),
    getNextPageParam: (page) => page.next_cursor ?? null,
    // Keep the list fresh while something in it is still being analysed.
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) => page.items.some((c) => !isSettled(c))) ? 2000 : false,
  });
}

export function useDeleteCapture() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (captureId: string) =>
      unwrap(
        api.DELETE("/api/v1/captures/{capture_id}", {
          params: { path: { capture_id: captureId } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: ["captures"] }),
  });
}
