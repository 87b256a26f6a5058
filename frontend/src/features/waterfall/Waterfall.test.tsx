import { cleanup, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, describe, expect, it } from "vitest";
import type { ConnectionTimeline } from "./geometry";
import { MAX_ROWS, Waterfall } from "./Waterfall";

afterEach(cleanup);

function timelines(count: number): ConnectionTimeline[] {
  // Like the lab's no_reuse_uploads: one short connection after the other, each with a handshake.
  return Array.from({ length: count }, (_, i) => ({
    flowId: i + 1,
    label: "10.77.0.2:80",
    startS: i * 0.5,
    endS: i * 0.5 + 0.4,
    handshakeS: [i * 0.5, i * 0.5 + 0.12] as const,
  }));
}

function renderWaterfall(items: ConnectionTimeline[]) {
  return render(
    <MemoryRouter>
      <Waterfall scope={{ kind: "capture", captureId: "c1" }} timelines={items} durationS={4} />
    </MemoryRouter>,
  );
}

describe("Waterfall", () => {
  it("draws one row per connection, each linking to its flow page", () => {
    const { container } = renderWaterfall(timelines(8));
    const rows = container.querySelectorAll(".waterfall__row");
    expect(rows).toHaveLength(8);
    expect(container.querySelectorAll("rect[data-kind='handshake']")).toHaveLength(8);
    expect(container.querySelectorAll("rect[data-kind='transfer']")).toHaveLength(8);
    expect(rows[2]?.querySelector("a")?.getAttribute("href")).toBe("/captures/c1/flows/3");
    expect(screen.getByRole("img").getAttribute("aria-label")).toBe(
      "Waterfall of 8 connections over 4 s",
    );
    expect(screen.queryByText(/the flow table below lists them all/)).toBeNull();
  });

  it("says so when it shows only the first connections", () => {
    const { container } = renderWaterfall(timelines(MAX_ROWS + 5));
    expect(container.querySelectorAll(".waterfall__row")).toHaveLength(MAX_ROWS);
    expect(
      screen.getByText(`The first ${MAX_ROWS} of ${MAX_ROWS + 5} connections`, { exact: false }),
    ).toBeTruthy();
  });
});
