import { describe, expect, it } from "vitest";
import { formatBytesExact, formatRate, formatSecondsTick } from "./numbers";

describe("graph number formats", () => {
  it("exact bytes, rates in bit/s, tick labels", () => {
    expect(formatBytesExact(1448)).toBe("1,448 B");
    expect(formatBytesExact(Number.NaN)).toBe("–");
    expect(formatRate(125_000)).toBe("1.00 Mbit/s");
    expect(formatSecondsTick(1.25, 0.05)).toBe("1.25");
    expect(formatSecondsTick(3, 1)).toBe("3");
  });
});
