// The workspace a page works in: `?workspace=<id>` in the URL (a link keeps it), else the one
// last chosen in this browser, else the first workspace the user owns, else the first one.

import { useCallback, useSyncExternalStore } from "react";
import { useSearchParams } from "react-router";
import { useSession } from "../api/session";
import type { Workspace } from "../api/types";

const STORAGE_KEY = "tcplens.workspace";
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function remembered(): string | null {
  return globalThis.localStorage?.getItem(STORAGE_KEY) ?? null;
}

export function pickWorkspace(
  workspaces: readonly Workspace[],
  wanted: string | null,
  last: string | null,
): Workspace | undefined {
  return (
    workspaces.find((w) => w.id === wanted) ??
    workspaces.find((w) => w.id === last) ??
    workspaces.find((w) => w.role === "owner") ??
    workspaces[0]
  );
}

export function useCurrentWorkspace(): Workspace | undefined {
  const session = useSession();
  const [params] = useSearchParams();
  const last = useSyncExternalStore(subscribe, remembered, () => null);
  return pickWorkspace(session.data?.workspaces ?? [], params.get("workspace"), last);
}

/** Switch workspace: remembered in this browser, and the URL parameter (if any) dropped. */
export function useChooseWorkspace(): (workspaceId: string) => void {
  const [, setParams] = useSearchParams();
  return useCallback(
    (workspaceId: string) => {
      globalThis.localStorage?.setItem(STORAGE_KEY, workspaceId);
      for (const listener of listeners) listener();
      setParams(
        (current) => {
          const next = new URLSearchParams(current);
          next.delete("workspace");
          return next;
        },
        { replace: true },
      );
    },
    [setParams],
  );
}
