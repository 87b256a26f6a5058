import { describe, expect, it } from "vitest";
import { addSample, bytesPerSecond, type ProgressSample, secondsLeft } from "./transferRate";

describe("upload speed", () => {
  it("is unknown from a single progress event", () => {
    expect(bytesPerSecond(addSample([], { atMs: 0, loaded: 0 }))).toBeNull();
  });

  it("follows the rate of the last two seconds, not the average since the start", () => {
    let samples: ProgressSample[] = [];
    // 1 MB/s for 4 s, then 4 MB/s for 2 s.
    for (let t = 0; t <= 4000; t += 500)
      samples = addSample(samples, { atMs: t, loaded: t * 1000 });
    for (let t = 4500; t <= 6000; t += 500) {
      samples = addSample(samples, { atMs: t, loaded: 4_000_000 + (t - 4000) * 4000 });
    }
    expect(bytesPerSecond(samples)).toBe(4_000_000);
    expect(samples[0]?.atMs).toBe(4000);
  });

  it("says how long is left at the current rate", () => {
    expect(secondsLeft(2_000_000, 10_000_000, 4_000_000)).toBe(2);
    expect(secondsLeft(10, 10, 5)).toBeNull();
    expect(secondsLeft(0, 10, null)).toBeNull();
  });
});
