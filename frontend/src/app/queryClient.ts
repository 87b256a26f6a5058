// The app's one TanStack Query cache. A module of its own so that the page load's requests
// (earlyRequests.ts) can start filling it before the app is rendered.

import { QueryClient } from "@tanstack/react-query";
import { isFinalRefusal } from "../api/http";

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A refusal (4xx: not found, gone, signed out, invalid) will not change by asking again,
        // except a timeout or a rate limit; other failures may be transient.
        retry: (failures, error) => !isFinalRefusal(error) && failures < 2,
        refetchOnWindowFocus: false,
        staleTime: 10_000,
      },
    },
  });
}

export const queryClient = makeQueryClient();
