// Who is signed in, and signing in/up/out. The session is a cookie; `/auth/me` answers 401 without.

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, isUnauthenticated, unwrap } from "./http";
import type { Session } from "./types";

const SESSION_KEY = ["session"] as const;

/** The session, or null when nobody is signed in (a 401 is an answer here, not an error). */
async function checkSession(signal?: AbortSignal): Promise<Session | null> {
  try {
    return await unwrap(api.GET("/api/v1/auth/me", signal ? { signal } : {}));
  } catch (error) {
    if (isUnauthenticated(error)) return null;
    throw error;
  }
}

/** The page load's session check, started before the app is evaluated (earlyRequests.ts). */
let early: Promise<Session | null> | null = null;

export function startSessionCheck(): void {
  early = checkSession();
  early.catch(() => undefined); // the query reports a failure when it takes the answer
}

export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: ({ signal }): Promise<Session | null> => {
      const first = early;
      early = null;
      return first ?? checkSession(signal);
    },
    staleTime: 60_000,
  });
}

export interface CredentialsInput {
  email: string;
  password: string;
}

/**
 * Sign in; for "signup", create the account first. Sign-up answers the same whether or not the
 * address already had an account and starts no session (so it tells nobody which addresses
 * have one): the sign-in that follows is what opens the new account, and only with its password.
 */
export function useSignIn(mode: "login" | "signup") {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: CredentialsInput) => {
      if (mode === "signup") await unwrap(api.POST("/api/v1/auth/signup", { body }));
      return unwrap(api.POST("/api/v1/auth/login", { body }));
    },
    onSuccess: (session) => {
      client.clear();
      client.setQueryData(SESSION_KEY, session);
    },
  });
}

export function useChangePassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) =>
      unwrap(api.POST("/api/v1/auth/password", { body })),
    // The session has a new id and CSRF token (the cookies were replaced too).
    onSuccess: (session) => client.setQueryData(SESSION_KEY, session),
  });
}

export function useSignOutEverywhere() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/v1/auth/logout-everywhere")),
    onSuccess: () => {
      client.clear();
      client.setQueryData(SESSION_KEY, null);
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
