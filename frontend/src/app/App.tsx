import { QueryClientProvider } from "@tanstack/react-query";
import { useState } from "react";
import { RouterProvider } from "react-router";
import { makeRouter } from "../routes/router";
import { queryClient } from "./queryClient";

export function App() {
  const [router] = useState(makeRouter);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
