// Share links of one capture: create (the token is shown once), list, revoke; and every link of a
// workspace, which its owners review.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "./http";

const sharesKey = (captureId: string) => ["capture", captureId, "shares"] as const;

export function useShareLinks(captureId: string) {
  return useQuery({
    queryKey: sharesKey(captureId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/captures/{capture_id}/shares", {
          params: { path: { capture_id: captureId } },
          signal,
        }),
      ),
  });
}

export function useCreateShareLink(captureId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { expires_in_s: number | null; allow_download: boolean }) =>
      unwrap(
        api.POST("/api/v1/captures/{capture_id}/shares", {
          params: { path: { capture_id: captureId } },
          body,
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: sharesKey(captureId) }),
  });
}

export function useRevokeShareLink(captureId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (linkId: string) =>
      unwrap(
        api.DELETE("/api/v1/captures/{capture_id}/shares/{link_id}", {
          params: { path: { capture_id: captureId, link_id: linkId } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: sharesKey(captureId) }),
  });
}

const workspaceSharesKey = (workspaceId: string) => ["workspace", workspaceId, "shares"] as const;

/** Every link to the workspace's captures (the API answers only to its owners), oldest first. */
export function useWorkspaceShareLinks(workspaceId: string) {
  return useQuery({
    queryKey: workspaceSharesKey(workspaceId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/workspaces/{workspace_id}/shares", {
          params: { path: { workspace_id: workspaceId } },
          signal,
        }),
      ),
  });
}

export function useRevokeWorkspaceShareLink(workspaceId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (link: { id: string; capture_id: string }) =>
      unwrap(
        api.DELETE("/api/v1/captures/{capture_id}/shares/{link_id}", {
          params: { path: { capture_id: link.capture_id, link_id: link.id } },
        }),
      ),
    onSuccess: (_, link) => {
      client.invalidateQueries({ queryKey: workspaceSharesKey(workspaceId) });
      client.invalidateQueries({ queryKey: sharesKey(link.capture_id) });
    },
  });
}
