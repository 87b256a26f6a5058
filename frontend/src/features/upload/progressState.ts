// What one upload looks like to the user at any moment: sending bytes, waiting for a worker,
// being analysed, done, or refused/failed with the reason in words. Pure, so it is unit-tested.

import { ApiError } from "../../api/http";
import type { Capture } from "../../api/types";
import { formatBytes } from "../../format/units";

export type ProgressState =
  | { kind: "uploading"; loaded: number; total: number; bytesPerSecond: number | null }
  | { kind: "queued" }
  | { kind: "analysing"; stage: string | null; fraction: number | null }
  | { kind: "done"; captureId: string }
  | { kind: "failed"; title: string; message: string; hint?: string | undefined };

export const SUPPORTED_FORMATS_HINT =
  "tcplens reads pcap and pcapng files (tcpdump, Wireshark, tshark), also gzip- or zstd-compressed.";

/** Reader errors (tcplens.capture.errors) after which the formats are worth repeating. */
const FORMAT_ERRORS = new Set(["not_a_capture", "unsupported_format", "bad_compression"]);

/** The analysis side of the progress, from the polled capture. */
export function analysisState(capture: Capture): ProgressState {
  switch (capture.status) {
    case "queued":
      return { kind: "queued" };
    case "running": {
      const { bytes_done: done, bytes_total: total } = capture.progress;
      return {
        kind: "analysing",
        stage: capture.progress.stage ?? null,
        fraction: total > 0 ? Math.min(1, done / total) : null,
      };
    }
    case "done":
      return { kind: "done", captureId: capture.id };
    case "failed":
      return {
        kind: "failed",
        title: "The analysis failed",
        message: capture.error?.message ?? "the analysis failed",
        hint: FORMAT_ERRORS.has(capture.error?.code ?? "") ? SUPPORTED_FORMATS_HINT : undefined,
      };
  }
}

/** Why the server (or the network) refused an upload, in words a user can act on. */
export function uploadErrorState(
  error: unknown,
  file: { name: string; size: number },
): ProgressState {
  if (!(error instanceof ApiError)) {
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "failed", title: "The upload did not finish", message };
  }
  const { problem } = error;
  const extra = problem as unknown as Record<string, unknown>;
  if (problem.code === "empty_upload") {
    return {
      kind: "failed",
      title: `${file.name} is empty`,
      message: "The file holds no bytes: nothing was captured into it, or it was cut off.",
      hint: SUPPORTED_FORMATS_HINT,
    };
  }
  switch (problem.status) {
    case 415:
      return {
        kind: "failed",
        title: `${file.name} is not a capture`,
        message: problem.detail,
        // The server usually lists the formats itself; say it once.
        hint: /pcapng/i.test(problem.detail) ? undefined : SUPPORTED_FORMATS_HINT,
      };
    case 413: {
      const limit = typeof extra.limit_bytes === "number" ? extra.limit_bytes : null;
      return {
        kind: "failed",
        title: "Too large",
        message: limit
          ? `${file.name} is ${formatBytes(file.size)}; the limit is ${formatBytes(limit)}.`
          : problem.detail,
        hint: "Cut it down with editcap or tcpdump -r … -w … with a filter for the slow connection.",
      };
    }
    case 429: {
      const wait = typeof extra.retry_after_s === "number" ? extra.retry_after_s : null;
      if (problem.code === "analysis_queue_full") {
        const limit = typeof extra.limit === "number" ? extra.limit : null;
        return {
          kind: "failed",
          title: "Too many analyses waiting",
          message: limit
            ? `This workspace already has ${limit} captures waiting to be analysed, the most it may have. Upload ${file.name} again when one has started${wait ? ` (in about ${wait} s)` : ""}.`
            : problem.detail,
        };
      }
      return {
        kind: "failed",
        title: "Too many uploads at once",
        message: wait ? `Try again in ${wait} s.` : problem.detail,
      };
    }
    case 401:
      return { kind: "failed", title: "Sign in to upload", message: problem.detail };
    default:
      return { kind: "failed", title: problem.title, message: problem.detail };
  }
}

/** Stage names of the worker, as a sentence fragment. */
export function stageLabel(stage: string | null): string {
  switch (stage) {
    case null:
    case "":
      return "Analysing";
    case "reading":
      return "Reading packets";
    case "analysing":
      return "Analysing TCP";
    case "storing":
      return "Storing results";
    default:
      return stage.charAt(0).toUpperCase() + stage.slice(1);
  }
}
