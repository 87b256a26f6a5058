// The page's side of the Wiregasm worker: one worker per open capture, requests as promises,
// load progress as a callback, terminate() when the user leaves the capture.

import type {
  FrameDetails,
  FramesPage,
  LoadSummary,
  ResultOf,
  WorkerRequest,
  WorkerResponse,
} from "./protocol";

/** Where the build puts Wiregasm's files (vite.config.ts copies them, pre-compressed). */
export const WIREGASM_ASSET_BASE = `/wiregasm/${__WIREGASM_VERSION__}/`;

export interface LoadProgress {
  readonly stage: string;
  /** 0..1 when the stage has a size (the WebAssembly download), else undefined. */
  readonly fraction?: number;
}

type Pending = { resolve: (value: never) => void; reject: (error: Error) => void };
// Distributes over the union so each request kind keeps its own fields.
type RequestBody = WorkerRequest extends infer R
  ? R extends { id: number }
    ? Omit<R, "id">
    : never
  : never;

export class WiregasmClient {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private terminated = false;

  constructor(private readonly onProgress: (progress: LoadProgress) => void) {
    // A classic worker (no `type: "module"`): it loads wiregasm.js with importScripts.
    this.worker = new Worker(new URL("./wiregasm-worker.ts", import.meta.url), {
      name: "wiregasm",
    });
    this.worker.onmessage = (event: MessageEvent<WorkerResponse>) => this.receive(event.data);
    this.worker.onerror = (event) =>
      this.failAll(new Error(event.message || "the Wiregasm worker failed"));
  }

  private receive(message: WorkerResponse): void {
    if (message.kind === "progress") {
      const fraction =
        message.loaded !== undefined && message.total
          ? Math.min(1, message.loaded / message.total)
          : undefined;
      this.onProgress({ stage: message.stage, ...(fraction !== undefined ? { fraction } : {}) });
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    if (message.kind === "error") pending.reject(new Error(message.message));
    else pending.resolve(message.result as never);
  }

  private failAll(error: Error): void {
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
  }

  private request<K extends keyof ResultOf>(
    body: RequestBody & { kind: K },
    transfer: Transferable[] = [],
  ): Promise<ResultOf[K]> {
    if (this.terminated) return Promise.reject(new Error("the packet details were closed"));
    const id = this.nextId++;
    return new Promise<ResultOf[K]>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: never) => void, reject });
      this.worker.postMessage({ ...body, id } as WorkerRequest, transfer);
    });
  }

  load(name: string, capture: ArrayBuffer): Promise<LoadSummary> {
    return this.request(
      {
        kind: "load",
        assetBase: WIREGASM_ASSET_BASE,
        wasmBytes: __WIREGASM_WASM_BYTES__,
        name,
        capture,
      },
      [capture],
    );
  }

  frames(filter: string, skip: number, limit: number): Promise<FramesPage> {
    return this.request({ kind: "frames", filter, skip, limit });
  }

  frame(number: number): Promise<FrameDetails> {
    return this.request({ kind: "frame", number });
  }

  terminate(): void {
    this.terminated = true;
    this.worker.terminate();
    this.failAll(new Error("the packet details were closed"));
  }
}
