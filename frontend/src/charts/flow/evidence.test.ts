import { describe, expect, it } from "vitest";
import { seriesFromColumns } from "../series/columns";
import { bottleneckRate, evidenceRanges } from "./evidence";

const data = seriesFromColumns("client_to_server", {
  columns: {
    time_s: [0.1, 0.2, 0.3, 1.5],
    seq: [1, 2, 3, 4],
    payload_len: [1, 1, 1, 1],
    events: [1024, 1024, 1, 1024],
  },
});
const acks = seriesFromColumns("server_to_client", {
  columns: { time_s: [0.15, 1.6], ack: [2, 5], events: [128, 0] },
});

function finding(
  factor: string,
  ranges: number[][],
  flows = [3],
  extra: Record<string, unknown> = {},
) {
  return {
    rank: 0,
    code: factor,
    severity: "high",
    factor,
    title: "Some title",
    flows,
    evidence: { time_ranges_s: ranges, ...extra },
  };
}

describe("evidence ranges", () => {
  it("labels a receiver-window finding with the flow's window-full marks, the legend's count", () => {
    // The range covers two of the three: the label counts the flow's, as the legend does for the
    // whole flow (issue 30: the label said ×14 where the legend said ×114).
    const ranges = evidenceRanges([finding("receiver_window", [[0, 1]])], 3, data, acks);
    expect(ranges).toEqual([
      {
        key: "0:0",
        from: 0,
        to: 1,
        label: "window full ×3",
        severity: "high",
        finding: 0,
        highlighted: false,
        span: { from: 0, to: 1 },
      },
    ]);
  });

  it("labels zero window by duration, loss by retransmissions, idle by median gap and count", () => {
    expect(evidenceRanges([finding("receiver_app", [[0.1, 1.3]])], 3, data, acks)[0]?.label).toBe(
      "zero window 1.2 s",
    );
    expect(evidenceRanges([finding("loss", [[0, 2]])], 3, data, acks)[0]?.label).toBe(
      "retransmissions ×1",
    );
    const idle = evidenceRanges(
      [
        finding("application", [
          [0, 0.2],
          [1, 1.2],
          [2, 2.3],
        ]),
      ],
      3,
      data,
      acks,
    );
    expect(idle.map((r) => r.label)).toEqual([
      "idle 200 ms × 3",
      "idle 200 ms × 3",
      "idle 200 ms × 3",
    ]);
    expect(idle[0]?.span).toEqual({ from: 0, to: 2.3 });
  });

  it("prefers the finding's own numbers, so the label agrees with its sentence", () => {
    const slow = { ...finding("receiver_app", [[2, 2.5]]), time_lost_s: 7.27 };
    expect(evidenceRanges([slow], 3, data, acks)[0]?.label).toBe("receiver slow 7.27 s");
    const loss = finding("loss", [[0, 2]], [3], { retransmissions: 67 });
    expect(evidenceRanges([loss], 3, data, acks)[0]?.label).toBe("retransmissions ×67");
    const nagle = finding("nagle_delayed_ack", [[0, 1]], [3], {
      stalls: 24,
      median_stall_ms: 42.269,
    });
    expect(evidenceRanges([nagle], 3, data, acks)[0]?.label).toBe("stall 42.3 ms × 24");
    const app = finding("application", [[0, 1]], [3], { turns: 31 });
    expect(evidenceRanges([app], 3, data, acks)[0]?.label).toBe("stop-and-wait ×31");
  });

  it("marks the finding a link pointed at", () => {
    const ranges = evidenceRanges([finding("loss", [[0, 2]])], 3, data, acks, 0);
    expect(ranges[0]?.highlighted).toBe(true);
  });

  it("ignores findings about other flows", () => {
    expect(evidenceRanges([finding("loss", [[0, 2]], [4])], 3, data, acks)).toEqual([]);
  });

  it("labels the path, slow-start and round-trip findings with their numbers, others with a short title", () => {
    const label = (f: ReturnType<typeof finding>) => evidenceRanges([f], 3, data, acks)[0]?.label;
    expect(label(finding("bandwidth", [[0, 1]], [3], { rate_bps: 27_600_000 }))).toBe(
      "bottleneck 27.6 Mbit/s",
    );
    expect(label(finding("slow_start", [[0, 1]], [3], { round_trips: 6.5 }))).toBe(
      "slow start 6.5 round trips",
    );
    expect(label(finding("latency", [[0, 1]], [3], { rtt_ms: 120 }))).toBe("round trips of 120 ms");
    const long = {
      ...finding("dns", [[0, 1]]),
      title: "Name lookups took 3.2 s before the connections started",
    };
    expect(label(long)).toBe("Name lookups took 3.2 s bef…");
  });

  it("gives the bytes-in-flight graph the rate its bottleneck label says, for this flow only", () => {
    const path = finding("bandwidth", [[0, 1]], [3], { rate_bps: 27_600_000 });
    const [range] = evidenceRanges([path], 3, data, acks);
    expect(range?.label).toBe("bottleneck 27.6 Mbit/s");
    expect(bottleneckRate([finding("loss", [[0, 1]]), path], 3)).toBe(27_600_000);
    expect(bottleneckRate([path], 4)).toBeNull();
    expect(bottleneckRate([finding("bandwidth", [[0, 1]])], 3)).toBeNull();
  });
});
