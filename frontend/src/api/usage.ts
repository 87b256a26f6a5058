// What a workspace stores against its storage quota. Under the captures' query key, so that
// whatever refreshes the captures list (an upload finished, a capture deleted) refreshes it too.

import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "./http";

export function useWorkspaceUsage(workspaceId: string | undefined) {
  return useQuery({
    queryKey: ["captures", workspaceId ?? "default", "usage"],
    enabled: workspaceId !== undefined,
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/workspaces/{workspace_id}/usage", {
          params: { path: { workspace_id: workspaceId ?? "" } },
          signal,
        }),
      ),
  });
}
