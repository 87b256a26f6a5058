// The workspace a page works in: `?workspace=<id>` in the URL (so links keep it), else the
// first workspace the user owns, else the first one they belong to.

import { useSearchParams } from "react-router";
import { useSession } from "../api/session";
import type { Workspace } from "../api/types";

export function useCurrentWorkspace(): Workspace | undefined {
  const session = useSession();
  const [params] = useSearchParams();
  const workspaces = session.data?.workspaces ?? [];
  const wanted = params.get("workspace");
  return (
    workspaces.find((w) => w.id === wanted) ??
    workspaces.find((w) => w.role === "owner") ??
    workspaces[0]
  );
}
