// The Wiregasm worker: Wireshark's dissectors compiled to WebAssembly, run off the main thread.
// A classic worker, because wiregasm.js is an Emscripten script loaded with importScripts from
// /wiregasm/<version>/ (served pre-compressed, cached for a year), not bundled.
//
// Every C++ vector Wiregasm returns (embind class handles: frame lists, columns, trees, data
// sources) is deleted once copied into plain objects: embind does not garbage-collect them and
// the worker's memory would grow with every packet opened.

import type {
  DissectSession,
  FrameMeta,
  ProtoTree,
  Vector,
  WiregasmLib,
} from "@goodtools/wiregasm";
import type {
  DataSourceBytes,
  FrameRow,
  TreeNode,
  WorkerRequest,
  WorkerResponse,
} from "./protocol";

interface WorkerScope {
  postMessage(message: WorkerResponse, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<WorkerRequest>) => void) | null;
  importScripts(...urls: string[]): void;
  loadWiregasm?: (overrides: Record<string, unknown>) => Promise<WiregasmLib>;
}

const scope = globalThis as unknown as WorkerScope;
let lib: WiregasmLib | null = null;
let session: DissectSession | null = null;
/** Vectors are class handles with delete(); the published types leave it out. */
type Deletable = { delete(): void };

function progress(stage: string, loaded?: number, total?: number): void {
  scope.postMessage({
    kind: "progress",
    stage,
    ...(loaded !== undefined ? { loaded } : {}),
    ...(total !== undefined ? { total } : {}),
  });
}

function drain<T>(vector: Vector<T>): T[] {
  const out: T[] = [];
  const n = vector.size();
  for (let i = 0; i < n; i++) out.push(vector.get(i));
  (vector as unknown as Deletable).delete();
  return out;
}

function treeOf(vector: Vector<ProtoTree>): TreeNode[] {
  return drain(vector).map((node) => ({
    label: node.label,
    filter: node.filter,
    start: node.start,
    length: node.length,
    dataSource: node.data_source_idx,
    children: treeOf(node.tree),
  }));
}

function bytesOf(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function start(assetBase: string, wasmBytes: number): Promise<WiregasmLib> {
  progress("Loading Wireshark (WebAssembly)…", 0, wasmBytes);
  scope.importScripts(`${assetBase}wiregasm.js`);
  const load = scope.loadWiregasm;
  if (!load) throw new Error("wiregasm.js did not define loadWiregasm");
  let failInstantiate: (error: Error) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    failInstantiate = reject;
  });
  const loading = load({
    locateFile: (path: string) => `${assetBase}${path}`,
    // Our own fetch of the module, to report download progress (the body arrives decompressed:
    // the server sends the .gz with Content-Encoding, so `loaded` counts the real module bytes).
    instantiateWasm(
      imports: WebAssembly.Imports,
      done: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
    ) {
      (async () => {
        const response = await fetch(`${assetBase}wiregasm.wasm`);
        if (!response.ok || !response.body)
          throw new Error(`wiregasm.wasm: HTTP ${response.status}`);
        let loaded = 0;
        let last = 0;
        const counted = response.body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              loaded += chunk.byteLength;
              if (loaded - last > wasmBytes / 50) {
                last = loaded;
                progress("Loading Wireshark (WebAssembly)…", loaded, wasmBytes);
              }
              controller.enqueue(chunk);
            },
          }),
        );
        const result = await WebAssembly.instantiateStreaming(
          new Response(counted, { headers: { "Content-Type": "application/wasm" } }),
          imports,
        );
        progress("Compiling the dissectors…", wasmBytes, wasmBytes);
        done(result.instance, result.module);
      })().catch((error: unknown) => {
        failInstantiate(new Error(`Wireshark could not be loaded: ${String(error)}`));
      });
      return {};
    },
    handleStatus: (_type: number, message: string) => progress(message),
    print: () => undefined,
    printErr: () => undefined,
  });
  const instance = await Promise.race([loading, failed]);
  if (!instance.init()) throw new Error("Wiregasm failed to initialise");
  return instance;
}

function columns(instance: WiregasmLib): string[] {
  return drain(instance.getColumns());
}

function rowsOf(frames: Vector<FrameMeta>): FrameRow[] {
  return drain(frames).map((f) => ({
    number: f.number,
    bg: f.bg,
    fg: f.fg,
    columns: drain(f.columns),
  }));
}

scope.onmessage = async (event) => {
  const request = event.data;
  try {
    switch (request.kind) {
      case "load": {
        lib ??= await start(request.assetBase, request.wasmBytes);
        progress("Dissecting the capture…");
        session?.delete();
        const path = `${lib.getUploadDirectory()}/${request.name.replace(/[^\w.-]/g, "_")}`;
        lib.FS.writeFile(path, new Uint8Array(request.capture));
        session = new lib.DissectSession(path);
        const loaded = session.load();
        if (loaded.code !== 0)
          throw new Error(
            loaded.error || `Wireshark could not read the capture (code ${loaded.code})`,
          );
        scope.postMessage({
          id: request.id,
          kind: "result",
          result: {
            packets: loaded.summary.packet_count,
            columns: columns(lib),
            wiresharkVersion: lib.wiresharkVersion(),
          },
        });
        return;
      }
      case "frames": {
        if (!session) throw new Error("no capture loaded");
        const response = session.getFrames(request.filter, request.skip, request.limit);
        const rows = rowsOf(response.frames);
        scope.postMessage({
          id: request.id,
          kind: "result",
          result: { matched: response.matched, rows },
        });
        return;
      }
      case "frame": {
        if (!session) throw new Error("no capture loaded");
        const frame = session.getFrame(request.number);
        const tree = treeOf(frame.tree);
        const sources: DataSourceBytes[] = drain(frame.data_sources).map((s) => ({
          name: s.name,
          bytes: bytesOf(s.data),
        }));
        drain(frame.comments);
        for (const inner of drain(frame.follow)) (inner as unknown as Deletable).delete();
        scope.postMessage(
          { id: request.id, kind: "result", result: { number: frame.number, tree, sources } },
          sources.map((s) => s.bytes.buffer as ArrayBuffer),
        );
        return;
      }
    }
  } catch (error) {
    scope.postMessage({
      id: request.id,
      kind: "error",
      message: error instanceof Error ? error.message : String(error),
    });
  }
};
