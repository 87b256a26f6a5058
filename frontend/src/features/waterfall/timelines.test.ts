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
    // Partial summaries on purpose: older results lack fields, the timelines must cope.
    summary: summary as unknown as Flow["summary"],
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

  it("takes handshake, data and idle times from the summary's timeline (report.py)", () => {
    const [timeline] = connectionTimelines(
      [
        flow(1, 1, 4, {
          handshake_rtt_ms: 90, // the timeline wins over start + RTT
          dns_s: [0.2, 0.9],
          timeline: {
            syn_s: 1,
            handshake_done_s: 1.2,
            first_data_s: 1.25,
            last_data_s: 4.5,
            idle_gaps_s: [[2, 3]],
          },
        }),
      ],
      [],
    );
    expect(timeline).toMatchObject({
      dnsS: [0.2, 0.9],
      handshakeS: [1, 1.2],
      dataS: [1.25, 4.5],
      idleS: [[2, 3]],
    });
    if (!timeline) throw new Error("no timeline");
    expect(connectionSegments(timeline)).toEqual([
      { kind: "dns", startS: 0.2, endS: 0.9 },
      { kind: "handshake", startS: 1, endS: 1.2 },
      { kind: "transfer", startS: 1.25, endS: 2 },
      { kind: "idle", startS: 2, endS: 3 },
      { kind: "transfer", startS: 3, endS: 4.5 },
    ]);
  });

  it("draws no transfer for a flow whose timeline has no data, and guesses without a timeline", () => {
    const [empty, old] = connectionTimelines(
      [
        flow(1, 1, 0.5, {
          timeline: {
            syn_s: 1,
            handshake_done_s: 1.1,
            first_data_s: null,
            last_data_s: null,
            idle_gaps_s: [],
          },
        }),
        flow(2, 2, 1, { handshake_rtt_ms: 100, syn_s: 7, idle_gaps_s: [[2.5, 2.8]] }),
      ],
      [],
    );
    if (!empty || !old) throw new Error("no timeline");
    expect(connectionSegments(empty)).toEqual([{ kind: "handshake", startS: 1, endS: 1.1 }]);
    // keys outside `timeline` are not timeline data: handshake from start_s + RTT, no idle
    expect(old.handshakeS?.[0]).toBe(2);
    expect(old.handshakeS?.[1]).toBeCloseTo(2.1, 9);
    expect(connectionSegments(old).map((s) => s.kind)).toEqual(["handshake", "transfer"]);
  });
});
