import { useEffect, useState } from "react";
import { fetchHealth, type Health } from "../../api/health";
import { ApiError } from "../../api/http";

type State =
  | { kind: "loading" }
  | { kind: "healthy"; health: Health }
  | { kind: "unhealthy"; reason: string };

interface Props {
  /** Where the health comes from; the API by default. */
  load?: (signal: AbortSignal) => Promise<Health>;
}

/** Shows whether the server and its database answer, and which version is running. */
export function HealthStatus({ load = fetchHealth }: Props) {
  const [state, setState] = useState<State>({ kind: "loading" });

  useEffect(() => {
    const controller = new AbortController();
    load(controller.signal).then(
      (health) => setState({ kind: "healthy", health }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        const reason =
          error instanceof ApiError ? error.problem.detail : "the server does not answer";
        setState({ kind: "unhealthy", reason });
      },
    );
    return () => controller.abort();
  }, [load]);

  switch (state.kind) {
    case "loading":
      return (
        <p className="health" role="status" aria-busy="true">
          Checking the server…
        </p>
      );
    case "healthy":
      return (
        <p className="health health--ok" role="status" data-testid="health">
          Server ok · database {state.health.database} · version {state.health.version}
        </p>
      );
    case "unhealthy":
      return (
        <p className="health health--error" role="alert" data-testid="health">
          Server unavailable: {state.reason}
        </p>
      );
  }
}
