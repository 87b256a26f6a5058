// The capture scope of the current route: /captures/:captureId/… or /shared/:token/….

import { useParams } from "react-router";
import type { CaptureScope } from "../api/scope";

export function useCaptureScope(): CaptureScope {
  const { captureId, token } = useParams();
  if (token) return { kind: "shared", token };
  if (captureId) return { kind: "capture", captureId };
  throw new Error("useCaptureScope outside a /captures/:captureId or /shared/:token route");
}

/** The flow number of a /…/flows/:flowId route, or null when it is not a positive integer. */
export function useFlowId(): number | null {
  const { flowId } = useParams();
  const id = Number(flowId);
  return Number.isInteger(id) && id > 0 ? id : null;
}
