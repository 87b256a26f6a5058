import { describe, expect, it } from "vitest";
import { connectionSegments, formatSeconds, layoutWaterfall } from "./geometry";

describe("connectionSegments", () => {
  it("splits a connection into DNS, handshake, transfer and idle in time order", () => {
    const segments = connectionSegments({
      flowId: 1,
      label: "10.0.0.2:80",
      startS: 1.5,
      endS: 4,
      dnsS: [0, 1.5],
      handshakeS: [1.5, 1.52],
      idleS: [[2, 3]],
    });
    expect(segments).toEqual([
      { kind: "dns", startS: 0, endS: 1.5 },
      { kind: "handshake", startS: 1.5, endS: 1.52 },
      { kind: "transfer", startS: 1.52, endS: 2 },
      { kind: "idle", startS: 2, endS: 3 },
      { kind: "transfer", startS: 3, endS: 4 },
    ]);
  });

  it("clips ranges to the connection and drops overlapping idle gaps", () => {
    const segments = connectionSegments({
      flowId: 2,
      label: "",
      startS: 1,
      endS: 2,
      dnsS: [0.5, 1.2], // answer seen after the SYN: only the part before the SYN is a DNS wait
      idleS: [
        [1.5, 2.5],
        [1.6, 1.7],
        [0, 0.9],
      ],
    });
    expect(segments).toEqual([
      { kind: "dns", startS: 0.5, endS: 1 },
      { kind: "transfer", startS: 1, endS: 1.5 },
      { kind: "idle", startS: 1.5, endS: 2 },
    ]);
  });

  it("draws transfer only between the first and last data packet, minus idle gaps", () => {
    const segments = connectionSegments({
      flowId: 4,
      label: "",
      startS: 0,
      endS: 10,
      handshakeS: [0, 0.1],
      dataS: [0.3, 9.5], // request sent 0.2 s after the handshake; FIN exchange after 9.5 s
      idleS: [
        [1, 4],
        [5, 6],
      ],
    });
    expect(segments).toEqual([
      { kind: "handshake", startS: 0, endS: 0.1 },
      { kind: "transfer", startS: 0.3, endS: 1 },
      { kind: "idle", startS: 1, endS: 4 },
      { kind: "transfer", startS: 4, endS: 5 },
      { kind: "idle", startS: 5, endS: 6 },
      { kind: "transfer", startS: 6, endS: 9.5 },
    ]);
  });

  it("is all transfer when nothing else is known", () => {
    expect(connectionSegments({ flowId: 3, label: "", startS: 0, endS: 0.25 })).toEqual([
      { kind: "transfer", startS: 0, endS: 0.25 },
    ]);
  });
});

describe("layoutWaterfall", () => {
  const timelines = [
    { flowId: 1, label: "a", startS: 0, endS: 1, handshakeS: [0, 0.1] as const },
    { flowId: 2, label: "b", startS: 5, endS: 10 },
  ];

  it("puts every connection on one axis from 0 to the capture's duration", () => {
    const layout = layoutWaterfall(timelines, { width: 1000, rowHeight: 20, durationS: 10 });
    expect(layout.height).toBe(40);
    expect(layout.rows.map((r) => r.y)).toEqual([0, 20]);
    const [handshake, transfer] = layout.rows[0]?.segments ?? [];
    expect(handshake).toMatchObject({ kind: "handshake", x: 0, width: 10 });
    expect(transfer).toMatchObject({ kind: "transfer", x: 10, width: 90 });
    expect(layout.rows[1]?.segments[0]).toMatchObject({ x: 500, width: 500 });
  });

  it("widens tiny segments to stay visible without running past the axis", () => {
    const layout = layoutWaterfall([{ flowId: 1, label: "", startS: 9.9999, endS: 10 }], {
      width: 1000,
      rowHeight: 20,
      durationS: 10,
      minSegmentPx: 3,
    });
    expect(layout.rows[0]?.segments[0]).toMatchObject({ width: 3, x: 997 });
  });

  it("extends the axis to DNS lookups that started before the first packet of a flow", () => {
    const layout = layoutWaterfall([{ flowId: 1, label: "", startS: 1, endS: 2, dnsS: [-1, 1] }], {
      width: 300,
      rowHeight: 20,
      durationS: 2,
    });
    expect(layout.rows[0]?.segments[0]).toMatchObject({ kind: "dns", x: 0, width: 200 });
  });

  it("labels ticks in engineers' units", () => {
    const layout = layoutWaterfall(timelines, { width: 900, rowHeight: 20, durationS: 10 });
    expect(layout.ticks[0]).toEqual({ x: 0, label: "0" });
    expect(layout.ticks.map((t) => t.label)).toContain("5 s");
  });
});

describe("formatSeconds", () => {
  it.each([
    [0, "0"],
    [0.0005, "0.5 ms"],
    [0.25, "250 ms"],
    [1.5, "1.5 s"],
    [125, "2 min 5 s"],
  ])("%s s → %s", (seconds, text) => {
    expect(formatSeconds(seconds)).toBe(text);
  });
});
