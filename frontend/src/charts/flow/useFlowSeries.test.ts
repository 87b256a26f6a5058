import { describe, expect, it } from "vitest";
import { emptySeries } from "../series/columns";
import { detailCovers, detailServes, type FlowSeries } from "./useFlowSeries";

const detail = (from: number, to: number): FlowSeries => ({
  client_to_server: emptySeries("client_to_server"),
  server_to_client: emptySeries("server_to_client"),
  range: { from, to },
});

describe("which series a view is drawn from", () => {
  it("uses a detail that covers the view, and refetches once zoomed 4× finer than it", () => {
    const d = detail(1, 4);
    expect(detailCovers(d, { from: 2, to: 3 })).toBe(true);
    expect(detailServes(d, { from: 2, to: 3 })).toBe(true);
    expect(detailCovers(d, { from: 2, to: 2.1 })).toBe(true);
    expect(detailServes(d, { from: 2, to: 2.1 })).toBe(false);
    expect(detailCovers(d, { from: 0.5, to: 2 })).toBe(false);
    expect(detailCovers(null, { from: 2, to: 3 })).toBe(false);
  });
});
