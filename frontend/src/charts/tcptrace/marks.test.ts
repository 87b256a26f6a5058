import { scaleLinear } from "d3-scale";
import { describe, expect, it } from "vitest";
import { seriesFromColumns } from "../series/columns";
import { distinctMarks } from "./MarksLayer";
import { countMarks, markCountAttributes, tcptraceMarks } from "./marks";
import { sackBars, sackBlocks } from "./sack";

// Bits as the backend orders EVENT_NAMES: retransmission = 1, duplicate_ack = 64,
// zero_window = 128, window_full = 1024.
const data = seriesFromColumns("client_to_server", {
  columns: {
    time_s: [0, 0.1, 0.2, 0.3, 0.4],
    frame: [1, 3, 5, 7, 9],
    seq: [0, 1, 1449, 1, 2897],
    payload_len: [0, 1448, 1448, 1448, 0],
    flags: [0x02, 0x18, 0x10, 0x10, 0x11],
    events: [0, 0, 1024, 1 | 2, 0],
  },
});
const acks = seriesFromColumns("server_to_client", {
  columns: {
    time_s: [0.05, 0.15, 0.25, 0.35],
    frame: [2, 4, 6, 8],
    ack: [1, 1449, 1449, 2897],
    window: [65535, 0, 2896, 65535],
    flags: [0x12, 0x10, 0x10, 0x14],
    events: [0, 128, 64, 0],
    sack_count: [0, 0, 1, 0],
    sack_left_0: [null, null, 2897, null],
    sack_right_0: [null, null, 4345, null],
  },
});

describe("tcptrace marks", () => {
  const marks = tcptraceMarks(data, acks);

  it("finds each event on the side Wireshark flags it", () => {
    const byKind = (kind: string) => marks.filter((m) => m.kind === kind).map((m) => m.frame);
    expect(byKind("window_full")).toEqual([5]);
    expect(byKind("retransmission")).toEqual([7]);
    expect(byKind("zero_window")).toEqual([4]);
    expect(byKind("duplicate_ack")).toEqual([6]);
    expect(byKind("syn")).toEqual([1]);
    expect(byKind("fin")).toEqual([9]);
    expect(byKind("rst")).toEqual([8]);
  });

  it("places data marks at the top of their segment and ACK marks on the ACK line", () => {
    const full = marks.find((m) => m.kind === "window_full");
    expect(full?.seq).toBe(2897);
    const zero = marks.find((m) => m.kind === "zero_window");
    expect(zero?.seq).toBe(1449);
  });

  it("is in time order and counts per kind, as data attributes", () => {
    expect(marks.map((m) => m.time)).toEqual([...marks.map((m) => m.time)].sort((a, b) => a - b));
    const counts = countMarks(marks);
    expect(counts.window_full).toBe(1);
    expect(counts.retransmission).toBe(1);
    expect(markCountAttributes(counts)["data-window-full-count"]).toBe("1");
    expect(markCountAttributes(counts)["data-duplicate-ack-count"]).toBe("1");
  });

  it("follows the server's own event order when it names one", () => {
    const reordered = seriesFromColumns("client_to_server", {
      columns: { time_s: [0], seq: [1], payload_len: [10], events: [1] },
      event_kinds: ["window_full", "retransmission"],
    });
    const kinds = tcptraceMarks(reordered, acks)
      .filter((m) => m.side === "data")
      .map((m) => m.kind);
    expect(kinds).toEqual(["window_full"]);
  });
});

describe("SACK blocks", () => {
  it("reads the blocks of the receiver's ACKs", () => {
    expect(sackBlocks(acks)).toEqual([
      { row: 2, time: 0.25, frame: 6, index: 0, left: 2897, right: 4345 },
    ]);
  });

  // One duplicate ACK of 1 carrying three blocks (the most beside timestamps), the next one two,
  // with -1 where a packet has fewer blocks, as the series endpoint sends them.
  const recovery = seriesFromColumns("server_to_client", {
    columns: {
      time_s: [1, 2],
      frame: [10, 12],
      ack: [1, 1],
      flags: [0x10, 0x10],
      sack_count: [3, 2],
      sack_left_0: [8689, 8689],
      sack_right_0: [10137, 11585],
      sack_left_1: [5793, 5793],
      sack_right_1: [7241, 7241],
      sack_left_2: [2897, -1],
      sack_right_2: [4345, -1],
    },
  });

  it("keeps every block of every packet, in the order sent", () => {
    const blocks = sackBlocks(recovery);
    expect(blocks.map((b) => [b.frame, b.index, b.left, b.right])).toEqual([
      [10, 0, 8689, 10137],
      [10, 1, 5793, 7241],
      [10, 2, 2897, 4345],
      [12, 0, 8689, 11585],
      [12, 1, 5793, 7241],
    ]);
  });

  it("draws each block as its own bar from its left edge up to its right edge", () => {
    // 100 px per second, one px per 100 bytes, y growing downwards from 200 px.
    const area = {
      x: scaleLinear().domain([0, 4]).range([0, 400]),
      y: scaleLinear().domain([0, 20000]).range([200, 0]),
      width: 400,
      height: 200,
    };
    const bars = sackBars(sackBlocks(recovery), area);
    const round = (v: number) => Math.round(v * 100) / 100;
    expect(bars.map((b) => [b.x, round(b.bottom), round(b.top)])).toEqual([
      [100.5, 113.11, 98.63],
      [100.5, 142.07, 127.59],
      [100.5, 171.03, 156.55],
      [200.5, 113.11, 84.15],
      [200.5, 142.07, 127.59],
    ]);
    // Separate islands: the bars of one ACK do not touch (the gaps are what is missing).
    const first = bars.slice(0, 3).sort((a, b) => a.bottom - b.bottom);
    for (let k = 1; k < first.length; k++) {
      expect((first[k - 1] as { bottom: number }).bottom).toBeLessThan(
        (first[k] as { top: number }).top,
      );
    }
    // A one-byte block is still a pixel tall.
    const tiny = sackBars([{ row: 0, time: 1, frame: 1, index: 0, left: 100, right: 101 }], area);
    expect((tiny[0] as { bottom: number }).bottom - (tiny[0] as { top: number }).top).toBe(1);
  });
});

describe("distinct marks", () => {
  it("draws one of a run of same-kind marks closer than a few pixels, every one when zoomed in", () => {
    const run = Array.from({ length: 100 }, (_, i) => ({
      kind: "window_full" as const,
      side: "data" as const,
      row: i,
      time: i * 0.001,
      seq: i,
      frame: i + 1,
    }));
    const area = (to: number) => ({
      x: scaleLinear().domain([0, to]).range([0, 1000]),
      y: scaleLinear().domain([0, 1000]).range([400, 0]),
      width: 1000,
      height: 400,
    });
    expect(distinctMarks(run, area(10)).length).toBeLessThan(10);
    expect(distinctMarks(run, area(0.1))).toHaveLength(100);
  });

  it("marks every re-sent segment from the `resent` column, once, even where Wireshark says out-of-order", () => {
    // out_of_order = 8: Wireshark's label for a quick re-send seen at the sender.
    const resent = seriesFromColumns("client_to_server", {
      columns: {
        time_s: [0, 0.1, 0.2, 0.3],
        frame: [1, 2, 3, 4],
        seq: [1, 1449, 1, 2897],
        payload_len: [1448, 1448, 1448, 1448],
        events: [0, 0, 8, 8],
        resent: [0, 0, 1, 0],
      },
    });
    const byKind = (kind: string) =>
      tcptraceMarks(resent, acks)
        .filter((m) => m.kind === kind)
        .map((m) => m.frame);
    expect(byKind("retransmission")).toEqual([3]);
    expect(byKind("out_of_order")).toEqual([4]);
    expect(Array.from(resent.resent)).toEqual([0, 0, 1, 0]);
    // Without the column, Wireshark's flag stands in.
    expect(Array.from(data.resent)).toEqual([0, 0, 0, 1, 0]);
  });
});
