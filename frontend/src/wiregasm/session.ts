// One Wiregasm worker per open capture, shared by the flow pages of that capture and terminated
// shortly after the last of them closes (leaving the capture). Each flow page loads its flow's
// packets (the API's slice: only that flow's frames, never the whole capture) into it; moving
// from one flow to another of the same capture keeps the loaded dissector.

import type { FlowFrames } from "../api/types";
import { type LoadProgress, WiregasmClient } from "./client";
import { FlowPackets } from "./flowPackets";
import type { LoadSummary } from "./protocol";

export type DissectorState =
  | { readonly status: "idle" }
  | { readonly status: "loading"; readonly progress: LoadProgress }
  | { readonly status: "ready"; readonly summary: LoadSummary; readonly packets: FlowPackets }
  | { readonly status: "error"; readonly message: string };

/** How long a capture's worker outlives its last flow page (a move between flows). */
export const RELEASE_DELAY_MS = 3000;
/** The slice is refused above this size: the browser holds it twice (worker + FS). */
export const MAX_CAPTURE_BYTES = 512 * 1024 * 1024;

export class CaptureDissector {
  state: DissectorState = { status: "idle" };
  private client: WiregasmClient | null = null;
  /** The flow whose packets are loaded, or being loaded (one at a time: loads queue). */
  private current: { readonly flowPath: string; readonly ready: Promise<FlowPackets> } | null =
    null;
  private readonly listeners = new Set<(state: DissectorState) => void>();
  users = 0;
  releaseTimer: ReturnType<typeof setTimeout> | undefined;

  subscribe(listener: (state: DissectorState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(state: DissectorState): void {
    this.state = state;
    for (const l of this.listeners) l(state);
  }

  /** The flow's packets in the dissector (`flowPath`: the API path of the flow); the first
   * call downloads Wiregasm, each new flow its slice. */
  open(flowPath: string): Promise<FlowPackets> {
    if (this.current?.flowPath === flowPath) return this.current.ready;
    const previous = this.current?.ready.catch(() => undefined) ?? Promise.resolve();
    const ready = previous
      .then(() => this.load(flowPath))
      .catch((error: unknown) => {
        if (this.current?.ready === ready) {
          this.current = null;
          this.set({
            status: "error",
            message: error instanceof Error ? error.message : String(error),
          });
        }
        throw error;
      });
    this.current = { flowPath, ready };
    return ready;
  }

  private async load(flowPath: string): Promise<FlowPackets> {
    const mine = () => this.current?.flowPath === flowPath;
    this.set({ status: "loading", progress: { stage: "Downloading the flow's packets…" } });
    const [listed, sliced] = await Promise.all([
      fetch(`${flowPath}/frames`, { credentials: "same-origin" }),
      fetch(`${flowPath}/packets`, { credentials: "same-origin" }),
    ]);
    for (const answer of [listed, sliced])
      if (!answer.ok) {
        // a problem+json says why (e.g. a share link that does not serve the packets)
        const problem = (await answer.json().catch(() => null)) as { detail?: string } | null;
        throw new Error(
          problem?.detail ?? `the flow's packets could not be read (HTTP ${answer.status})`,
        );
      }
    const length = Number(sliced.headers.get("Content-Length") ?? 0);
    if (length > MAX_CAPTURE_BYTES)
      throw new Error("the flow's packets are too large to dissect in the browser");
    const frames = (await listed.json()) as FlowFrames;
    // The slice holds the flow's first frames (the server caps its size): how many, it says.
    const held = Number(sliced.headers.get("X-Tcplens-Slice-Frames") ?? frames.frames.length);
    const bytes = await sliced.arrayBuffer();
    this.client ??= new WiregasmClient((progress) => {
      if (this.state.status === "loading") this.set({ status: "loading", progress });
    });
    const summary = await this.client.load("flow.pcap", bytes);
    const packets = new FlowPackets(
      this.client,
      frames.frames.slice(0, held),
      frames.total,
      summary.columns,
      frames.start_s ?? 0,
    );
    if (mine()) this.set({ status: "ready", summary, packets });
    return packets;
  }

  terminate(): void {
    this.client?.terminate();
    this.client = null;
    this.current = null;
    this.set({ status: "idle" });
  }
}

const dissectors = new Map<string, CaptureDissector>();

export function acquireDissector(capturePath: string): CaptureDissector {
  let d = dissectors.get(capturePath);
  if (!d) {
    d = new CaptureDissector();
    dissectors.set(capturePath, d);
  }
  clearTimeout(d.releaseTimer);
  d.users++;
  return d;
}

export function releaseDissector(dissector: CaptureDissector, capturePath: string): void {
  dissector.users--;
  if (dissector.users > 0) return;
  dissector.releaseTimer = setTimeout(() => {
    if (dissector.users > 0) return;
    dissector.terminate();
    dissectors.delete(capturePath);
  }, RELEASE_DELAY_MS);
}
