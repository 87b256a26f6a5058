import { describe, expect, it } from "vitest";
import { factorLabel, formatBitRate, formatBytes, formatDuration } from "./units";

describe("units", () => {
  it.each([
    [0, "0 B"],
    [999, "999 B"],
    [1000, "1.00 kB"],
    [102_400, "102 kB"],
    [5_000_000, "5.00 MB"],
    [2_147_483_648, "2.15 GB"],
  ])("%s bytes → %s", (bytes, text) => expect(formatBytes(bytes)).toBe(text));

  it.each([
    [800, "800 bit/s"],
    [14_900_000, "14.9 Mbit/s"],
    [1e9, "1.00 Gbit/s"],
  ])("%s bit/s → %s", (rate, text) => expect(formatBitRate(rate)).toBe(text));

  it.each([
    [0, "0 s"],
    [0.0402, "40.2 ms"],
    [1.5, "1.5 s"],
    [61, "1 min 1 s"],
  ])("%s s → %s", (seconds, text) => expect(formatDuration(seconds)).toBe(text));

  it("names the limiting factors in words", () => {
    expect(factorLabel("receiver_window")).toBe("Receiver window");
    expect(factorLabel(null)).toBe("–");
    expect(factorLabel("something_new")).toBe("something new");
  });
});
