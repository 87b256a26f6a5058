// Share links of one capture: create (the token is shown once), list, revoke.

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
