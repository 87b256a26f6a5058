// API tokens for scripts and the `tcplens upload` CLI: create (the secret is shown once), revoke.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "./http";
import type { TokenScope } from "./types";

const TOKENS_KEY = ["tokens"] as const;

export function useApiTokens() {
  return useQuery({
    queryKey: TOKENS_KEY,
    queryFn: ({ signal }) => unwrap(api.GET("/api/v1/tokens", { signal })),
  });
}

export function useCreateApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { name: string; workspace_id: string; scopes: TokenScope[] }) =>
      unwrap(api.POST("/api/v1/tokens", { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}

export function useRevokeApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (tokenId: string) =>
      unwrap(api.DELETE("/api/v1/tokens/{token_id}", { params: { path: { token_id: tokenId } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}
