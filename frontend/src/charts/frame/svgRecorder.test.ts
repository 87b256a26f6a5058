import { scaleLinear } from "d3-scale";
import { describe, expect, it } from "vitest";
import { seriesFromColumns } from "../series/columns";
import { sackLayer, segmentsLayer } from "../tcptrace/layers";
import { sackBlocks } from "../tcptrace/sack";
import { ChartPalette } from "./palette";
import { recordLayers, SvgRecorder } from "./svgRecorder";

const SVG_NS = "http://www.w3.org/2000/svg";
const group = () => document.createElementNS(SVG_NS, "g");
const area = {
  x: scaleLinear().domain([0, 1]).range([0, 100]),
  y: scaleLinear().domain([0, 1000]).range([100, 0]),
  width: 100,
  height: 100,
};

describe("the SVG recorder", () => {
  it("records strokes with their style and fills as filled paths", () => {
    const g = group();
    const ctx = new SvgRecorder(g);
    ctx.strokeStyle = "#1f9d3a";
    ctx.lineWidth = 1.5;
    ctx.setLineDash([7, 5]);
    ctx.beginPath();
    ctx.moveTo(0, 10);
    ctx.lineTo(50.123, 10);
    ctx.stroke();
    ctx.save();
    ctx.globalAlpha = 0.12;
    ctx.fillStyle = "#d62728";
    ctx.fillRect(1, 2, 3, 4);
    ctx.restore();
    ctx.fillRect(5, 6, 7, 8);
    const [line, faint, solid] = Array.from(g.children);
    expect(line?.getAttribute("d")).toBe("M0 10L50.12 10");
    expect(line?.getAttribute("stroke")).toBe("#1f9d3a");
    expect(line?.getAttribute("fill")).toBe("none");
    expect(line?.getAttribute("stroke-width")).toBe("1.5");
    expect(line?.getAttribute("stroke-dasharray")).toBe("7 5");
    expect(faint?.getAttribute("opacity")).toBe("0.12");
    expect(faint?.getAttribute("fill")).toBe("#d62728");
    // restore() brought back full opacity and the default fill.
    expect(solid?.getAttribute("opacity")).toBeNull();
    expect(solid?.getAttribute("fill")).toBe("#000000");
  });

  it("draws a full circle as two half arcs that end where they start", () => {
    const g = group();
    const ctx = new SvgRecorder(g);
    ctx.beginPath();
    ctx.arc(10, 20, 2.5, 0, 2 * Math.PI);
    ctx.fill();
    expect(g.firstElementChild?.getAttribute("d")).toBe(
      "M12.5 20A2.5 2.5 0 1 1 7.5 20A2.5 2.5 0 1 1 12.5 20",
    );
  });

  it("turns the tcptrace layers into paths, one vertical bar per segment and per SACK block", () => {
    const data = seriesFromColumns("client_to_server", {
      columns: {
        time_s: [0.1, 0.2],
        seq: [0, 100],
        payload_len: [100, 100],
        resent: [0, 1],
      },
    });
    const acks = seriesFromColumns("server_to_client", {
      columns: {
        time_s: [0.5],
        ack: [0],
        flags: [0x10],
        sack_count: [2],
        sack_left_0: [300],
        sack_right_0: [400],
        sack_left_1: [600],
        sack_right_1: [700],
      },
    });
    const blocks = sackBlocks(acks);
    const g = group();
    recordLayers(
      g,
      [
        segmentsLayer(data),
        sackLayer(
          blocks,
          Float64Array.from(blocks, (b) => b.time),
        ),
      ],
      area,
      // The dark theme's colours: the export paints what the theme says, not fixed colours.
      new ChartPalette(
        (name) =>
          ({
            "--chart-data": "#6aa5ff",
            "--chart-retransmission": "#ff6b6b",
            "--chart-sack": "#c084fc",
          })[name] ?? "",
      ),
    );
    const paths = Array.from(g.querySelectorAll("path"));
    expect(g.querySelector("image")).toBeNull();
    const stroke = (color: string) => paths.filter((p) => p.getAttribute("stroke") === color);
    // Original segment blue, the re-sent one red (the palette's), each from seq to seq + len, then its end ticks.
    expect(stroke("#6aa5ff").map((p) => p.getAttribute("d"))).toEqual([
      "M10.5 100L10.5 90M7.5 90L14.5 90M7.5 100L14.5 100",
    ]);
    expect(stroke("#ff6b6b")[0]?.getAttribute("d")).toMatch(/^M20\.5 90L20\.5 80M/);
    // Two SACK bars at the ACK's time, each with its end ticks.
    const sack = stroke("#c084fc")[0]?.getAttribute("d") ?? "";
    expect(sack.match(/M50\.5 /g)?.length).toBe(2);
    expect(sack).toContain("M50.5 70L50.5 60");
    expect(sack).toContain("M50.5 40L50.5 30");
  });
});
