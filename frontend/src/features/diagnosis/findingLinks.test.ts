import { describe, expect, it } from "vitest";
import type { Finding } from "../../api/types";
import { findingLinks } from "./findingLinks";

function finding(flows: number[], ranges: unknown): Finding {
  return {
    rank: 2,
    code: "receiver-window-limited",
    severity: "high",
    factor: "receiver_window",
    time_lost_s: 13,
    title: "",
    summary: "",
    fix: "",
    flows,
    evidence: { time_ranges_s: ranges },
  };
}

const scope = { kind: "capture", captureId: "c1" } as const;

describe("findingLinks", () => {
  it("opens a single flow on the span of all its evidence", () => {
    const links = findingLinks(
      scope,
      finding(
        [1],
        [
          [0.060913, 0.432371],
          [1.681645, 13.155935],
        ],
      ),
    );
    expect(links).toEqual([
      {
        flowId: 1,
        fromS: 0.060913,
        toS: 13.155935,
        href: "/captures/c1/flows/1?from=0.060913&to=13.155935&finding=2",
      },
    ]);
  });

  it("gives each flow its own range when there is one per flow", () => {
    const links = findingLinks(
      { kind: "shared", token: "tok" },
      finding(
        [3, 4],
        [
          [1, 2],
          [5, 6],
        ],
      ),
    );
    expect(links.map((l) => l.href)).toEqual([
      "/shared/tok/flows/3?from=1&to=2&finding=2",
      "/shared/tok/flows/4?from=5&to=6&finding=2",
    ]);
  });

  it("links without a range when the evidence has none that makes sense", () => {
    const links = findingLinks(scope, finding([7], [[5, 1], "x", [1]]));
    expect(links[0]?.href).toBe("/captures/c1/flows/7?finding=2");
  });
});
