import { cleanup, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, describe, expect, it } from "vitest";
import type { Capture } from "../../api/types";
import { TopFindingCell } from "./CapturesPage";

afterEach(cleanup);

function capture(change: Partial<Capture>): Capture {
  return {
    id: "c1",
    workspace_id: "w1",
    filename: "slow.pcap",
    sha256: "0".repeat(64),
    size_bytes: 1000,
    format: "pcap",
    compression: null,
    status: "done",
    progress: { stage: null, bytes_done: 1000, bytes_total: 1000 },
    error: null,
    facts: null,
    analyzer_version: "0.1.0",
    timings_s: null,
    created_at: "2026-11-22T06:00:00Z",
    started_at: null,
    finished_at: null,
    download_allowed: true,
    ...change,
  };
}

describe("the captures list's top finding", () => {
  it("shows the most important finding's severity and title, linking to the capture", () => {
    render(
      <MemoryRouter>
        <TopFindingCell
          capture={capture({
            top_finding: {
              code: "receiver-window-limited",
              severity: "high",
              factor: "receiver_window",
              title: "Receiver window limited the transfer",
              time_lost_s: 1.5,
            },
          })}
        />
      </MemoryRouter>,
    );
    const link = screen.getByRole("link");
    expect(link.getAttribute("href")).toBe("/captures/c1");
    expect(link.textContent).toBe("high Receiver window limited the transfer");
  });

  it("says nothing was found only once the analysis is done", () => {
    const { rerender } = render(
      <MemoryRouter>
        <TopFindingCell capture={capture({ top_finding: null })} />
      </MemoryRouter>,
    );
    expect(screen.getByText("nothing found")).toBeTruthy();
    rerender(
      <MemoryRouter>
        <TopFindingCell capture={capture({ status: "running", top_finding: null })} />
      </MemoryRouter>,
    );
    expect(screen.queryByText("nothing found")).toBeNull();
  });
});
