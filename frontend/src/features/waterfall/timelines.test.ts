import { describe, expect, it } from "vitest";
import type { Finding, Flow } from "../../api/types";
import { connectionSegments } from "./geometry";
import { connectionTimelines } from "./timelines";

function flow(
  id: number,
  startS: number,
  durationS: number,
  summary: Record<string, unknown>,
): Flow {
  return {
    id,
    client: "10.77.0.1:40000",
    server: "10.77.0.2:80",
    start_s: startS,
    duration_s: durationS,
    bytes_total: 0,
    packets: 0,
    throughput_bps: 0,
    retransmissions: 0,
    time_lost_s: 0,
    limiting_factor: null,
    summary,
  };
}

function dnsFinding(flows: number[], ranges: [number, number][]): Finding {
  return {
    rank: 0,
    code: "dns-delay",
    severity: "high",
    factor: "dns",
    time_lost_s: 3,
    title: "DNS delay",
    summary: "",
    fix: "",
    flows,
    evidence: { time_ranges_s: ranges },
  };
}

describe("connectionTimelines", () => {
  it("draws the DNS lookups before the SYN as one wait (lab dns_delay_upload: PTR then A, 1.5 s each)", () => {
    const [timeline] = connectionTimelines(
      [flow(1, 3.044568, 0.127055, { handshake_rtt_ms: 40.2 })],
      [
        dnsFinding(
          [1],
          [
            [0, 1.521905],
            [1.522358, 3.044019],
          ],
        ),
      ],
    );
    expect(timeline?.dnsS).toEqual([0, 3.044019]);
    expect(timeline?.handshakeS?.[0]).toBe(3.044568);
    expect(timeline?.handshakeS?.[1]).toBeCloseTo(3.084768, 6);
    if (!timeline) throw new Error("no timeline");
    expect(connectionSegments(timeline).map((s) => s.kind)).toEqual([
      "dns",
      "handshake",
      "transfer",
    ]);
  });

  it("gives each flow its own range when the finding has one per flow", () => {
    const timelines = connectionTimelines(
      [flow(1, 1, 1, {}), flow(2, 5, 1, {})],
      [
        dnsFinding(
          [1, 2],
          [
            [0.5, 1],
            [4, 5],
          ],
        ),
      ],
    );
    expect(timelines.map((t) => t.dnsS)).toEqual([
      [0.5, 1],
      [4, 5],
    ]);
  });

  it("prefers the exact timeline when the flow summary carries one", () => {
    const [timeline] = connectionTimelines(
      [
        flow(1, 1, 4, {
          syn_s: 1,
          handshake_done_s: 1.2,
          idle_gaps_s: [[2, 3]],
          dns_s: [0.2, 0.9],
        }),
      ],
      [],
    );
    expect(timeline).toMatchObject({ dnsS: [0.2, 0.9], handshakeS: [1, 1.2], idleS: [[2, 3]] });
  });
});
