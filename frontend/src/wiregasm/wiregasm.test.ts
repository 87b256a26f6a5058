import { describe, expect, it } from "vitest";
import { originalFrame, renumberRow, renumberTree, shiftSeconds, sliceFrame } from "./flowPackets";
import { cssColor, formatOffset, hexRows } from "./hex";
import type { TreeNode } from "./protocol";

describe("the flow's packets under the capture's frame numbers", () => {
  // The slice of a flow whose packets are the capture's frames 3, 4, 9, 10 and 250.
  const frames = [3, 4, 9, 10, 250];

  it("maps slice frames to the capture's and back", () => {
    expect(originalFrame(frames, 1)).toBe(3);
    expect(originalFrame(frames, 5)).toBe(250);
    expect(sliceFrame(frames, 9)).toBe(3);
    expect(sliceFrame(frames, 250)).toBe(5);
    expect(sliceFrame(frames, 5)).toBeNull();
    expect(sliceFrame(frames, 251)).toBeNull();
    expect(sliceFrame([], 1)).toBeNull();
  });

  it("shows the capture's numbers in the No. column and in duplicate-ACK marks", () => {
    const row = renumberRow(
      {
        number: 4,
        bg: 0,
        fg: 0,
        columns: ["4", "0.1", "TCP", "80 → 5000 [TCP Dup ACK 2#1] Ack=1"],
      },
      ["No.", "Time", "Protocol", "Info"],
      frames,
    );
    expect(row.number).toBe(10);
    expect(row.columns).toEqual(["10", "0.1", "TCP", "80 → 5000 [TCP Dup ACK 4#1] Ack=1"]);
  });

  it("counts times from the capture's start, as the graphs do", () => {
    expect(shiftSeconds("0.000000", 12.5)).toBe("12.500000");
    expect(shiftSeconds("1.000200", 2.000002)).toBe("3.000202");
    expect(shiftSeconds("0.100000000", 0.000000007)).toBe("0.100000007");
    expect(shiftSeconds("-0.25", 0.1)).toBe("-0.15");
    expect(shiftSeconds("Jan 1", 3)).toBe("Jan 1");
    const row = renumberRow(
      { number: 1, bg: 0, fg: 0, columns: ["1", "0.250000"] },
      ["No.", "Time"],
      frames,
      3.75,
    );
    expect(row.columns).toEqual(["3", "4.000000"]);
  });

  it("renames the frame and every frame reference of a dissection", () => {
    const node = (label: string, filter: string, children: TreeNode[] = []): TreeNode => ({
      label,
      filter,
      start: 0,
      length: 0,
      dataSource: 0,
      children,
    });
    const tree = renumberTree(
      [
        node("Frame 5: 66 bytes on wire (528 bits)", "frame", [
          node("Frame Number: 5", "frame.number == 5"),
          node(
            "[Time since reference or first frame: 0.500000000 seconds]",
            "frame.time_relative == 0.500000000",
          ),
        ]),
        node("Transmission Control Protocol, Src Port: 80", "tcp", [
          node("This is an ACK to the segment in frame: 2", "tcp.analysis.acks_frame == 2"),
          node("Window: 5", "tcp.window_size_value == 5"),
        ]),
      ],
      frames,
      2,
    );
    expect(tree[0]?.label).toBe("Frame 250: 66 bytes on wire (528 bits)");
    expect(tree[0]?.children[1]?.label).toBe(
      "[Time since reference or first frame: 2.500000000 seconds]",
    );
    expect(tree[0]?.children[0]?.label).toBe("Frame Number: 250");
    expect(tree[1]?.children[0]?.label).toBe("This is an ACK to the segment in frame: 4");
    expect(tree[1]?.children[0]?.filter).toBe("tcp.analysis.acks_frame == 4");
    // not a frame number: untouched
    expect(tree[1]?.children[1]?.label).toBe("Window: 5");
  });
});

describe("hex view", () => {
  it("splits bytes into rows of 16 with printable ASCII", () => {
    const bytes = new Uint8Array([0x47, 0x45, 0x54, 0x20, ...new Array(14).fill(0)]);
    const rows = hexRows(bytes);
    expect(rows).toHaveLength(2);
    expect(rows[0]?.hex.slice(0, 4)).toEqual(["47", "45", "54", "20"]);
    expect(rows[0]?.ascii.slice(0, 5)).toBe("GET .");
    expect(rows[1]?.offset).toBe(16);
    expect(formatOffset(16)).toBe("0010");
    expect(cssColor(0xe7e6ff)).toBe("#e7e6ff");
  });
});
