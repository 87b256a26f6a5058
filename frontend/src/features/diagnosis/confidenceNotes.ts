// What the capture could not see of a finding's flows, in plain words: the finding's confidence
// inputs (evidence.confidence, issue 26 item 6), so a reader knows how far to trust it.

import type { Confidence } from "../../api/types";

const PLACES: Record<string, string> = {
  near_client: "near the client",
  near_server: "near the server",
  middle: "between the two ends",
  unknown: "at an unknown place",
};

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

/** Where the capture sat: one place, or each of the flows' places. */
export function capturePointNote(confidence: Confidence): string {
  const points = Array.isArray(confidence.capture_point)
    ? confidence.capture_point
    : [confidence.capture_point];
  const places = points.map((p) => PLACES[p] ?? p);
  return places.length === 1
    ? `Captured ${places[0]}.`
    : `These flows were captured at different places: ${places.join(", ")}.`;
}

/** One sentence per thing the capture could not see; empty when it saw everything. */
export function confidenceNotes(confidence: Confidence): string[] {
  const notes: string[] = [];
  if (!confidence.handshake_captured) {
    notes.push(
      "The handshake was not captured: window scale and handshake round trip are not in the capture.",
    );
  }
  if (confidence.inferred.includes("window_scale")) {
    notes.push("The window scale was inferred from the data, not read from the handshake.");
  }
  if (confidence.snaplen != null && confidence.packets_cut > 0) {
    notes.push(
      `The capture kept only the first ${count(confidence.snaplen, "byte", "bytes")} of each packet ` +
        `(snaplen), and cut ${count(confidence.packets_cut, "packet", "packets")} of these flows: ` +
        "sizes and sequence numbers come from the headers and stand, but the payload itself is " +
        "not in the capture.",
    );
  }
  if (confidence.packets_missing > 0) {
    notes.push(
      `${count(confidence.packets_missing, "segment was", "segments were")} not captured ` +
        "(gaps in the sequence numbers).",
    );
  }
  if (confidence.timestamps_backwards > 0) {
    notes.push(
      `${count(confidence.timestamps_backwards, "packet is", "packets are")} timed before the one ` +
        "before it.",
    );
  }
  if (confidence.clock_jumps > 0) {
    notes.push(
      `The capture's clock jumps ${count(confidence.clock_jumps, "time", "times")} inside these ` +
        "flows (spliced captures or a clock step): no time across a jump is counted as a round " +
        "trip, a duration or idle time.",
    );
  }
  if (confidence.capture_truncated) {
    notes.push("The capture file is cut short: its last packet is incomplete.");
  }
  return notes;
}
