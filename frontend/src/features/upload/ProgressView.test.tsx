import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ApiError } from "../../api/http";
import type { Capture } from "../../api/types";
import { ProgressView } from "./ProgressView";
import { analysisState, SUPPORTED_FORMATS_HINT, uploadErrorState } from "./progressState";

afterEach(cleanup);

function capture(change: Partial<Capture>): Capture {
  return {
    id: "c1",
    workspace_id: "w1",
    filename: "slow.pcap",
    sha256: "0".repeat(64),
    size_bytes: 4_000_000,
    format: "pcap",
    compression: null,
    status: "queued",
    progress: { stage: null, bytes_done: 0, bytes_total: 4_000_000 },
    error: null,
    facts: null,
    analyzer_version: null,
    timings_s: null,
    created_at: "2026-11-22T06:00:00Z",
    started_at: null,
    finished_at: null,
    download_allowed: true,
    ...change,
  };
}

function problem(status: number, detail: string, extra: Record<string, unknown> = {}) {
  return new ApiError({ type: "about:blank", title: "t", status, detail, code: "x", ...extra });
}

describe("upload progress", () => {
  it("shows bytes sent, the speed and the time left while uploading", () => {
    render(
      <ProgressView
        label="slow.pcap"
        state={{
          kind: "uploading",
          loaded: 1_500_000,
          total: 6_000_000,
          bytesPerSecond: 1_500_000,
        }}
      />,
    );
    const bar = screen.getByRole("progressbar", { name: "Uploading slow.pcap" });
    expect(bar.getAttribute("aria-valuenow")).toBe("25");
    expect(screen.getByText("1.50 MB of 6.00 MB")).toBeTruthy();
    expect(screen.getByText("1.50 MB/s")).toBeTruthy();
    expect(screen.getByText("3 s left")).toBeTruthy();
  });

  it("has no speed before the second progress event", () => {
    render(
      <ProgressView
        label="a.pcap"
        state={{ kind: "uploading", loaded: 0, total: 100, bytesPerSecond: null }}
      />,
    );
    expect(screen.queryByText(/\/s$/)).toBeNull();
    expect(screen.queryByText(/left$/)).toBeNull();
  });
});

describe("analysis progress", () => {
  it("is indeterminate while the capture waits for a worker", () => {
    render(<ProgressView label="slow.pcap" state={analysisState(capture({ status: "queued" }))} />);
    const bar = screen.getByRole("progressbar");
    expect(bar.hasAttribute("aria-valuenow")).toBe(false);
    expect(bar.getAttribute("data-indeterminate")).toBe("true");
    expect(screen.getByText("Uploaded · waiting for an analysis worker")).toBeTruthy();
  });

  it("names the stage and the share of the file read while running", () => {
    const state = analysisState(
      capture({
        status: "running",
        progress: { stage: "reading", bytes_done: 3_000_000, bytes_total: 4_000_000 },
      }),
    );
    expect(state).toEqual({ kind: "analysing", stage: "reading", fraction: 0.75 });
    render(<ProgressView label="slow.pcap" state={state} />);
    expect(screen.getByText("Reading packets")).toBeTruthy();
    expect(screen.getByText("75 %")).toBeTruthy();
    expect(screen.getByRole("progressbar").getAttribute("aria-valuenow")).toBe("75");
  });

  it("is complete when the capture is done", () => {
    render(<ProgressView label="slow.pcap" state={analysisState(capture({ status: "done" }))} />);
    expect(screen.getByRole("progressbar").getAttribute("aria-valuenow")).toBe("100");
    expect(screen.getByText("Analysis complete")).toBeTruthy();
  });

  it("says why the analysis failed, in the server's words", () => {
    const state = analysisState(
      capture({
        status: "failed",
        error: { code: "not_a_capture", message: "the file ends inside a packet header" },
      }),
    );
    render(<ProgressView label="slow.pcap" state={state} />);
    expect(screen.getByRole("alert").textContent).toContain("The analysis failed");
    expect(screen.getByText("the file ends inside a packet header")).toBeTruthy();
    expect(screen.getByText(SUPPORTED_FORMATS_HINT)).toBeTruthy();
  });
});

describe("refused uploads", () => {
  const file = { name: "notes.txt", size: 3_100_000_000 };

  it("not a capture: names the file and the formats tcplens reads", () => {
    const state = uploadErrorState(
      problem(415, "not a capture: supported formats are pcap, pcapng (optionally .gz, .zst)"),
      file,
    );
    render(<ProgressView label={file.name} state={state} />);
    expect(screen.getByText("notes.txt is not a capture")).toBeTruthy();
    expect(screen.getByText(/supported formats are pcap, pcapng/)).toBeTruthy();
    // The server named the formats: they are not repeated.
    expect(screen.queryByText(SUPPORTED_FORMATS_HINT)).toBeNull();
  });

  it("not a capture, without the formats in the server's words: adds them", () => {
    const state = uploadErrorState(problem(415, "unsupported media type"), file);
    expect(state).toMatchObject({ hint: SUPPORTED_FORMATS_HINT });
  });

  it("too large: the file's size against the limit", () => {
    const state = uploadErrorState(problem(413, "too large", { limit_bytes: 2_147_483_648 }), file);
    expect(state).toMatchObject({
      kind: "failed",
      title: "Too large",
      message: "notes.txt is 3.10 GB; the limit is 2.15 GB.",
    });
  });

  it("empty: says the file is empty, not that the request is invalid", () => {
    const empty = new ApiError({
      type: "urn:tcplens:problem:empty_upload",
      title: "The file is empty",
      status: 422,
      detail: "the upload is empty",
      code: "empty_upload",
    });
    expect(uploadErrorState(empty, file)).toMatchObject({
      kind: "failed",
      title: "notes.txt is empty",
    });
  });

  it("rate limited: when to try again", () => {
    expect(uploadErrorState(problem(429, "slow down", { retry_after_s: 12 }), file)).toMatchObject({
      title: "Too many uploads at once",
      message: "Try again in 12 s.",
    });
  });

  it("the workspace's analysis queue is full: how many wait, and when to try again", () => {
    const full = new ApiError({
      type: "urn:tcplens:problem:analysis_queue_full",
      title: "Too many analyses waiting",
      status: 429,
      detail: "the workspace already has 10 analyses waiting (at most 10)",
      code: "analysis_queue_full",
      ...{ retry_after_s: 30, queued: 10, limit: 10 },
    });
    expect(uploadErrorState(full, file)).toMatchObject({
      kind: "failed",
      title: "Too many analyses waiting",
      message:
        "This workspace already has 10 captures waiting to be analysed, the most it may have. Upload notes.txt again when one has started (in about 30 s).",
    });
  });

  it("network failure: the browser's reason", () => {
    expect(uploadErrorState(new Error("the server could not be reached"), file)).toMatchObject({
      title: "The upload did not finish",
      message: "the server could not be reached",
    });
  });
});
