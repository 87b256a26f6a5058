// One Wiregasm worker per open capture, shared by the flow pages of that capture and terminated
// shortly after the last of them closes (leaving the capture). Moving from one flow to another of
// the same capture keeps the loaded dissector.

import { type LoadProgress, WiregasmClient } from "./client";
import type { LoadSummary } from "./protocol";

export type DissectorState =
  | { readonly status: "idle" }
  | { readonly status: "loading"; readonly progress: LoadProgress }
  | { readonly status: "ready"; readonly summary: LoadSummary }
  | { readonly status: "error"; readonly message: string };

/** How long a capture's worker outlives its last flow page (a move between flows). */
export const RELEASE_DELAY_MS = 3000;
/** The capture file is refused above this size: the browser holds it twice (worker + FS). */
export const MAX_CAPTURE_BYTES = 512 * 1024 * 1024;

export class CaptureDissector {
  state: DissectorState = { status: "idle" };
  private client: WiregasmClient | null = null;
  private ready: Promise<WiregasmClient> | null = null;
  private readonly listeners = new Set<(state: DissectorState) => void>();
  users = 0;
  releaseTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly capturePath: string) {}

  subscribe(listener: (state: DissectorState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(state: DissectorState): void {
    this.state = state;
    for (const l of this.listeners) l(state);
  }

  /** The loaded dissector; the first call downloads Wiregasm and the capture. */
  open(): Promise<WiregasmClient> {
    this.ready ??= this.load().catch((error: unknown) => {
      this.ready = null;
      this.client?.terminate();
      this.client = null;
      this.set({
        status: "error",
        message: error instanceof Error ? error.message : String(error),
      });
      throw error;
    });
    return this.ready;
  }

  private async load(): Promise<WiregasmClient> {
    this.set({ status: "loading", progress: { stage: "Downloading the capture…" } });
    const response = await fetch(`${this.capturePath}/file`, { credentials: "same-origin" });
    if (!response.ok)
      throw new Error(`the capture file could not be read (HTTP ${response.status})`);
    const length = Number(response.headers.get("Content-Length") ?? 0);
    if (length > MAX_CAPTURE_BYTES)
      throw new Error("the capture is too large to dissect in the browser");
    const bytes = await response.arrayBuffer();
    const client = new WiregasmClient((progress) => this.set({ status: "loading", progress }));
    this.client = client;
    const summary = await client.load("capture.pcap", bytes);
    this.set({ status: "ready", summary });
    return client;
  }

  terminate(): void {
    this.client?.terminate();
    this.client = null;
    this.ready = null;
    this.set({ status: "idle" });
  }
}

const dissectors = new Map<string, CaptureDissector>();

export function acquireDissector(capturePath: string): CaptureDissector {
  let d = dissectors.get(capturePath);
  if (!d) {
    d = new CaptureDissector(capturePath);
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
