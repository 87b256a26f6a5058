import { describe, expect, it } from "vitest";
import {
  bytesAxis,
  durationAxis,
  formatBytesExact,
  formatRate,
  formatSecondsTick,
  rateAxis,
} from "./numbers";

describe("graph number formats", () => {
  it("exact bytes, rates in bit/s, tick labels", () => {
    expect(formatBytesExact(1448)).toBe("1,448 B");
    expect(formatBytesExact(Number.NaN)).toBe("–");
    expect(formatRate(125_000)).toBe("1.00 Mbit/s");
    expect(formatSecondsTick(1.25, 0.05)).toBe("1.25");
    expect(formatSecondsTick(3, 1)).toBe("3");
  });
});

describe("axis tick labels", () => {
  it("one unit per axis, chosen by the top tick, with the digits the step needs", () => {
    const mbits = [0, 5e6, 10e6, 15e6].map((v) => rateAxis(v, 5e6, 15e6));
    expect(mbits).toEqual(["0 Mbit/s", "40 Mbit/s", "80 Mbit/s", "120 Mbit/s"]);
    expect([0, 2e6, 12e6].map((v) => bytesAxis(v, 2e6, 12e6))).toEqual(["0 MB", "2 MB", "12 MB"]);
    expect([0, 0.5e6, 1.5e6].map((v) => bytesAxis(v, 0.5e6, 1.5e6))).toEqual([
      "0.0 MB",
      "0.5 MB",
      "1.5 MB",
    ]);
    expect([0, 0.02, 0.1].map((v) => durationAxis(v, 0.02, 0.1))).toEqual([
      "0 ms",
      "20 ms",
      "100 ms",
    ]);
    expect(durationAxis(0.0004, 0.0001, 0.0005)).toBe("400 µs");
    expect(bytesAxis(512, 100, 900)).toBe("512 B");
  });

  it("a single value (the crosshair) keeps three significant digits", () => {
    expect(bytesAxis(1_234_567)).toBe("1.23 MB");
    expect(durationAxis(0.0312)).toBe("31.2 ms");
    expect(rateAxis(Number.NaN)).toBe("–");
  });
});
