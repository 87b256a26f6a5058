import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState } from "react";
import { RouterProvider } from "react-router";
import { isNotFound, isUnauthenticated } from "../api/http";
import { makeRouter } from "../routes/router";

function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A 404 or 401 will not change by asking again; other failures may be transient.
        retry: (failures, error) => !isNotFound(error) && !isUnauthenticated(error) && failures < 2,
        refetchOnWindowFocus: false,
        staleTime: 10_000,
      },
    },
  });
}

export function App() {
  const [client] = useState(makeQueryClient);
  const [router] = useState(makeRouter);
  return (
    <QueryClientProvider client={client}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
