import { describe, expect, it } from "vitest";
import { formatBytes, formatBytesExact, formatDuration, formatRate } from "./format";

describe("formats", () => {
  it("bytes", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1448)).toBe("1.45 kB");
    expect(formatBytes(65535)).toBe("65.5 kB");
    expect(formatBytes(3_200_000)).toBe("3.20 MB");
    expect(formatBytes(Number.NaN)).toBe("–");
    expect(formatBytesExact(1448)).toBe("1,448 B");
  });
  it("rates in bits per second", () => {
    expect(formatRate(125_000)).toBe("1.00 Mbit/s");
    expect(formatRate(1_250_000_000)).toBe("10.0 Gbit/s");
  });
  it("durations", () => {
    expect(formatDuration(1.2)).toBe("1.200 s");
    expect(formatDuration(0.2)).toBe("200 ms");
    expect(formatDuration(0.0405)).toBe("40.5 ms");
    expect(formatDuration(0.00005)).toBe("50 µs");
  });
});
