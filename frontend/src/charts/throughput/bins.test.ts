import { describe, expect, it } from "vitest";
import { bandwidthDelayProduct, peakRate } from "../inflight/bdp";
import { seriesFromColumns } from "../series/columns";
import { advanceRate, bytesSentCumulative, niceBinWidth } from "./bins";

describe("bins", () => {
  it("picks 1-2-5 bin widths", () => {
    expect(niceBinWidth(10, 100)).toBe(0.1);
    expect(niceBinWidth(10, 40)).toBeCloseTo(0.5);
    expect(niceBinWidth(3, 100)).toBeCloseTo(0.05);
  });

  it("turns a cumulative count into a rate per bin", () => {
    // 1000 bytes acknowledged every 0.1 s for 1 s, then nothing for 1 s.
    const time = Float64Array.from({ length: 11 }, (_, i) => i / 10);
    const acked = Float64Array.from({ length: 11 }, (_, i) => i * 1000);
    const bins = advanceRate(time, acked, 0, 2, 0.5);
    expect(Array.from(bins.start)).toEqual([0, 0.5, 1, 1.5]);
    // Bin [0, 0.5): 0 → 4000 (rows 0..4); [0.5, 1): 4000 → 9000; [1, 1.5): 9000 → 10000; then 0.
    expect(Array.from(bins.rate)).toEqual([8000, 10000, 2000, 0]);
  });

  it("is exact on a min/max-reduced series: only the running maximum matters", () => {
    const time = Float64Array.from([0, 0.2, 0.4, 0.6, 0.8]);
    const acked = Float64Array.from([0, 500, 400, 1500, 2000]);
    const bins = advanceRate(time, acked, 0, 1, 0.5);
    expect(Array.from(bins.rate)).toEqual([1000, 3000]);
  });

  it("counts retransmitted bytes in throughput when every row is there", () => {
    const data = seriesFromColumns("client_to_server", {
      columns: { time_s: [0, 1, 2], seq: [1, 1449, 1], payload_len: [1448, 1448, 1448] },
    });
    const sent = bytesSentCumulative(data);
    expect(sent.includesRetransmissions).toBe(true);
    expect(Array.from(sent.values)).toEqual([1448, 2896, 4344]);
    const reduced = seriesFromColumns("client_to_server", {
      columns: { time_s: [0, 2], seq: [1, 1], payload_len: [1448, 1448] },
      reduced: true,
    });
    expect(bytesSentCumulative(reduced).includesRetransmissions).toBe(false);
  });
});

describe("bandwidth-delay product", () => {
  it("is rate × minimum RTT", () => {
    const bdp = bandwidthDelayProduct(peakRate(Float64Array.from([Number.NaN, 1e6, 2.5e6])), 0.04);
    expect(bdp?.bytes).toBeCloseTo(100_000);
    expect(bandwidthDelayProduct(Number.NaN, 0.04)).toBeNull();
  });
});
