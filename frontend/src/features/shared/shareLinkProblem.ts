// Why a share link opened nothing, from the API's problem: revoked by its owner, past its expiry,
// or never a link at all. The reasons' codes come from the shared API (share_revoked,
// share_expired; share_link_not_found when it cannot tell). Pure: unit-tested.

import { ApiError } from "../../api/http";

export type ShareLinkProblem = "revoked" | "expired" | "unknown";

/** The reason a share link's request failed, or null when it failed for another reason. */
export function shareLinkProblem(error: unknown): ShareLinkProblem | null {
  if (!(error instanceof ApiError)) return null;
  const { code, status } = error.problem;
  if (/^share(_link)?_revoked$/.test(code)) return "revoked";
  if (/^share(_link)?_expired$/.test(code)) return "expired";
  if (code === "share_link_not_found" || status === 404 || status === 410) return "unknown";
  return null;
}
