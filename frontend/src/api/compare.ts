// Two captures of the same transfer compared (GET /api/v1/compare), as a TanStack Query hook.

import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "./http";
import type { Comparison } from "./types";

export function useComparison(before: string | null, after: string | null) {
  return useQuery({
    queryKey: ["compare", before, after],
    enabled: before !== null && after !== null && before !== after,
    // 404 / 409 / 422 are answers, not hiccups: asking again gives the same one
    retry: false,
    queryFn: ({ signal }): Promise<Comparison> =>
      unwrap(
        api.GET("/api/v1/compare", {
          params: { query: { before: before ?? "", after: after ?? "" } },
          signal,
        }),
      ),
  });
}
