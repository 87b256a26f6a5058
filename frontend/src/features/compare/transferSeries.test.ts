import { describe, expect, it } from "vitest";
import { seriesFromColumns } from "../../charts/series/columns";
import { transferSeries } from "./transferSeries";

function part(times: number[], seqs: number[], len: number) {
  return {
    client_to_server: seriesFromColumns("client_to_server", {
      columns: { time_s: [times[0] ?? 0], seq: [0], payload_len: [1] },
    }),
    server_to_client: seriesFromColumns("server_to_client", {
      columns: { time_s: times, seq: seqs, payload_len: seqs.map(() => len) },
    }),
  };
}

describe("transferSeries", () => {
  it("chains the flows' data directions on one axis from the transfer's start", () => {
    const merged = transferSeries(
      [part([10.1, 10.2], [0, 1000], 1000), part([10.5, 10.6], [0, 1000], 1000)],
      10,
    );
    expect(merged.direction).toBe("server_to_client");
    expect(Array.from(merged.time).map((t) => Number(t.toFixed(3)))).toEqual([0.1, 0.2, 0.5, 0.6]);
    // the second flow's sequence continues after the first flow's 2000 bytes
    expect(Array.from(merged.seq)).toEqual([0, 1000, 2000, 3000]);
  });

  it("keeps rows of parallel flows in time order", () => {
    const merged = transferSeries([part([1, 3], [0, 10], 10), part([2], [0], 10)], 0);
    expect(Array.from(merged.time)).toEqual([1, 2, 3]);
    expect(Array.from(merged.seq)).toEqual([0, 20, 10]);
  });
});
