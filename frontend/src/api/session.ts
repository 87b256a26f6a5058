// Who is signed in, and signing in/up/out. The session is a cookie; `/auth/me` answers 401 without.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, isUnauthenticated, unwrap } from "./http";
import type { Session } from "./types";

const SESSION_KEY = ["session"] as const;

/** The session, or null when nobody is signed in (a 401 is an answer here, not an error). */
export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: async ({ signal }): Promise<Session | null> => {
      try {
        return await unwrap(api.GET("/api/v1/auth/me", { signal }));
      } catch (error) {
        if (isUnauthenticated(error)) return null;
        throw error;
      }
    },
    staleTime: 60_000,
  });
}

export interface CredentialsInput {
  email: string;
  password: string;
}

export function useSignIn(mode: "login" | "signup") {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: CredentialsInput) =>
      mode === "login"
        ? unwrap(api.POST("/api/v1/auth/login", { body }))
        : unwrap(api.POST("/api/v1/auth/signup", { body })),
    onSuccess: (session) => {
      client.clear();
      client.setQueryData(SESSION_KEY, session);
    },
  });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/auth/logout")),
    onSettled: () => {
      client.clear();
      client.setQueryData(SESSION_KEY, null);
    },
  });
}
