import { describe, expect, it } from "vitest";
import type { Confidence } from "../../api/types";
import { capturePointNote, confidenceNotes } from "./confidenceNotes";

const clear: Confidence = {
  capture_point: "near_client",
  handshake_captured: true,
  inferred: [],
  packets_missing: 0,
  timestamps_backwards: 0,
  capture_truncated: false,
  snaplen: null,
  packets_cut: 0,
  clock_jumps: 0,
};

describe("confidenceNotes", () => {
  it("says nothing when the capture saw everything", () => {
    expect(confidenceNotes(clear)).toEqual([]);
    expect(capturePointNote(clear)).toBe("Captured near the client.");
  });

  it("names the snaplen and what it means for the finding", () => {
    expect(confidenceNotes({ ...clear, snaplen: 96, packets_cut: 1234 })).toEqual([
      "The capture kept only the first 96 bytes of each packet (snaplen), and cut 1,234 packets " +
        "of these flows: sizes and sequence numbers come from the headers and stand, but the " +
        "payload itself is not in the capture.",
    ]);
  });

  it("names the clock jumps inside the flows", () => {
    expect(confidenceNotes({ ...clear, clock_jumps: 1 })).toEqual([
      "The capture's clock jumps 1 time inside these flows (spliced captures or a clock step): " +
        "no time across a jump is counted as a round trip, a duration or idle time.",
    ]);
  });

  it("lists every other limit in plain words, in one order", () => {
    const notes = confidenceNotes({
      ...clear,
      capture_point: ["near_client", "middle"],
      handshake_captured: false,
      inferred: ["window_scale"],
      packets_missing: 3,
      timestamps_backwards: 1,
      capture_truncated: true,
    });
    expect(notes).toEqual([
      "The handshake was not captured: window scale and handshake round trip are not in the capture.",
      "The window scale was inferred from the data, not read from the handshake.",
      "3 segments were not captured (gaps in the sequence numbers).",
      "1 packet is timed before the one before it.",
      "The capture file is cut short: its last packet is incomplete.",
    ]);
    expect(capturePointNote({ ...clear, capture_point: ["near_client", "middle"] })).toBe(
      "These flows were captured at different places: near the client, between the two ends.",
    );
  });
});
