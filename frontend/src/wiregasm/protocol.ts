// Typed messages between the page and the Wiregasm worker (Wiregasm's own examples keep the
// dissector in a worker and talk to it with request/response messages; so do we).

/** One row of the packet list: Wireshark's columns and colouring-rule colours (0xRRGGBB). */
export interface FrameRow {
  readonly number: number;
  readonly bg: number;
  readonly fg: number;
  readonly columns: readonly string[];
}

/** A node of the dissection tree; `start`/`length` are the bytes it covers in `dataSource`. */
export interface TreeNode {
  readonly label: string;
  readonly filter: string;
  readonly start: number;
  readonly length: number;
  readonly dataSource: number;
  readonly children: readonly TreeNode[];
}

export interface DataSourceBytes {
  readonly name: string;
  readonly bytes: Uint8Array;
}

export interface FrameDetails {
  readonly number: number;
  readonly tree: readonly TreeNode[];
  readonly sources: readonly DataSourceBytes[];
}

export interface LoadSummary {
  readonly packets: number;
  readonly columns: readonly string[];
  readonly wiresharkVersion: string;
}

export interface FramesPage {
  readonly matched: number;
  readonly rows: readonly FrameRow[];
}

export type WorkerRequest =
  | {
      readonly id: number;
      readonly kind: "load";
      /** URL prefix of wiregasm.js / .wasm / .data, ending in "/". */
      readonly assetBase: string;
      readonly wasmBytes: number;
      readonly name: string;
      readonly capture: ArrayBuffer;
    }
  | {
      readonly id: number;
      readonly kind: "frames";
      readonly filter: string;
      readonly skip: number;
      readonly limit: number;
    }
  | { readonly id: number; readonly kind: "frame"; readonly number: number };

export interface ResultOf {
  load: LoadSummary;
  frames: FramesPage;
  frame: FrameDetails;
}

export type WorkerResponse =
  | {
      readonly kind: "progress";
      readonly stage: string;
      readonly loaded?: number;
      readonly total?: number;
    }
  | { readonly id: number; readonly kind: "result"; readonly result: ResultOf[keyof ResultOf] }
  | { readonly id: number; readonly kind: "error"; readonly message: string };
