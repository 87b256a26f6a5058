// Workspace members: list, invite an e-mail address (owners), cancel an invitation, remove.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "./http";

const membersKey = (workspaceId: string) => ["workspace", workspaceId, "members"] as const;

export function useMembers(workspaceId: string) {
  return useQuery({
    queryKey: membersKey(workspaceId),
    queryFn: ({ signal }) =>
      unwrap(
        api.GET("/api/v1/workspaces/{workspace_id}/members", {
          params: { path: { workspace_id: workspaceId } },
          signal,
        }),
      ),
  });
}

export function useInviteMember(workspaceId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (email: string) =>
      unwrap(
        api.POST("/api/v1/workspaces/{workspace_id}/members", {
          params: { path: { workspace_id: workspaceId } },
          body: { email },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: membersKey(workspaceId) }),
  });
}

export function useCancelInvitation(workspaceId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (email: string) =>
      unwrap(
        api.DELETE("/api/v1/workspaces/{workspace_id}/invitations/{email}", {
          params: { path: { workspace_id: workspaceId, email } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: membersKey(workspaceId) }),
  });
}

export function useRemoveMember(workspaceId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) =>
      unwrap(
        api.DELETE("/api/v1/workspaces/{workspace_id}/members/{user_id}", {
          params: { path: { workspace_id: workspaceId, user_id: userId } },
        }),
      ),
    onSuccess: () => client.invalidateQueries({ queryKey: membersKey(workspaceId) }),
  });
}
