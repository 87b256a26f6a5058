// Performance of the flow graphs on a flow of a million packets, through the level-of-detail series
// endpoint, in this machine's headless Chromium. Prints the figures; fails when the first draw takes
// more than 300 ms once the data is there, or zoom/pan runs below 30 frames per second.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "../fixtures";
import { writeBulkTransferPcap } from "../pages/bulkTransfer";
import { signUp, uploadAndAnalyse } from "../pages/flowCapture";

// Tracing records the page while it runs: it would measure itself, not the graphs.
test.use({ trace: "off" });

const SEGMENTS = 500_000; // + as many ACKs: 1 000 103 packets in one flow

test("a 1M-packet flow: first draw ≤ 300 ms, zoom and pan ≥ 30 frames/s", async ({ page }) => {
  test.setTimeout(600_000);
  const dir = mkdtempSync(path.join(tmpdir(), "tcplens-perf-"));
  try {
    const file = path.join(dir, "bulk-1M.pcap");
    const packets = writeBulkTransferPcap(file, SEGMENTS);
    const csrf = await signUp(page.request);
    const started = Date.now();
    const id = await uploadAndAnalyse(page.request, csrf, file, 480_000);
    const analysed = Date.now() - started;

    // The machine is shared (other builds and tests run beside this one): each figure is the best
    // of three runs, the usual way to keep other tenants' load out of a benchmark.
    const firsts: FirstDraw[] = [];
    const motions: Motion[] = [];
    for (let run = 0; run < 3; run++) {
      await page.goto(`/captures/${id}/flows/1?graph=tcptrace&direction=client_to_server`);
      const graph = page.getByTestId("graph-tcptrace");
      await expect(graph).toHaveAttribute("data-draws", /\d+/, { timeout: 60_000 });
      await expect(graph).toHaveAttribute(
        "data-retransmission-count",
        String(Math.floor(SEGMENTS / 5000)),
      );
      firsts.push(await page.evaluate(measureFirstDraw));
      await page.waitForTimeout(500); // let the page settle (the URL write, late layout) before timing
      motions.push(await page.evaluate(measureMotion));
    }
    const first = firsts.reduce((a, b) =>
      b.firstDrawAfterDataMs < a.firstDrawAfterDataMs ? b : a,
    );
    const motion = motions.reduce((a, b) => (b.fps > a.fps ? b : a));

    console.log(
      [
        `graph performance, ${packets.toLocaleString("en-US")} packets in one flow (analysed in ${(analysed / 1000).toFixed(1)} s):`,
        `  series endpoint (whole flow, LOD): ${first.seriesMs.toFixed(0)} ms`,
        `  first draw after the data arrived: ${first.firstDrawAfterDataMs.toFixed(0)} ms (canvas ${first.canvasMs.toFixed(1)} ms)`,
        `  first draw since navigation: ${first.firstDrawSinceNavigationMs.toFixed(0)} ms`,
        `  runs: first draw ${firsts.map((f) => f.firstDrawAfterDataMs.toFixed(0)).join(" / ")} ms, zoom/pan ${motions.map((m) => m.fps.toFixed(1)).join(" / ")} frames/s (best counts)`,
        `  zoom/pan: ${motion.fps.toFixed(1)} frames/s over ${motion.seconds.toFixed(1)} s, p95 frame ${motion.p95FrameMs.toFixed(1)} ms, ${motion.redraws} redraws`,
      ].join("\n"),
    );
    expect(first.firstDrawAfterDataMs).toBeLessThanOrEqual(300);
    expect(motion.fps).toBeGreaterThanOrEqual(30);
    expect(motion.redraws).toBeGreaterThanOrEqual(140);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

interface FirstDraw {
  seriesMs: number;
  firstDrawAfterDataMs: number;
  firstDrawSinceNavigationMs: number;
  canvasMs: number;
}
interface Motion {
  fps: number;
  p95FrameMs: number;
  redraws: number;
  seconds: number;
}

/** In the page: when the first draw came, after navigation and after the series data arrived. */
function measureFirstDraw(): FirstDraw {
  const series = performance
    .getEntriesByType("resource")
    .filter((e) => e.name.includes("/series?")) as PerformanceResourceTiming[];
  const dataAt = Math.max(...series.slice(0, 2).map((e) => e.responseEnd));
  const draw = performance.getEntriesByName("tcplens:chart-draw")[0] as PerformanceMark;
  return {
    seriesMs: Math.max(...series.slice(0, 2).map((e) => e.responseEnd - e.startTime)),
    firstDrawAfterDataMs: draw.startTime - dataAt,
    firstDrawSinceNavigationMs: draw.startTime,
    canvasMs: draw.detail as number,
  };
}

/**
 * In the page: zoom in and out with the wheel, then pan with the keyboard, one event per animation
 * frame, counting the frames the browser manages to paint meanwhile. Every event moves the view,
 * so every frame should carry a redraw.
 */
async function measureMotion(): Promise<Motion> {
  const svg = document.querySelector(".chart-svg") as SVGSVGElement;
  const plot = svg.querySelector("g") as SVGGElement;
  const box = plot.getBoundingClientRect();
  const frames: number[] = [];
  const drawsBefore = Number((svg.parentElement as HTMLElement).dataset.draws);
  await new Promise<void>((resolve) => {
    let step = 0;
    const tick = (now: number) => {
      frames.push(now);
      if (step < 90) {
        plot.dispatchEvent(
          new WheelEvent("wheel", {
            deltaY: step < 60 ? -60 : 60, // 60 steps in, 30 out
            clientX: box.left + box.width * 0.4,
            clientY: box.top + 100,
            bubbles: true,
            cancelable: true,
          }),
        );
      } else {
        svg.dispatchEvent(
          new KeyboardEvent("keydown", {
            key: step % 2 ? "ArrowRight" : "ArrowLeft",
            bubbles: true,
          }),
        );
      }
      step++;
      if (step < 180) requestAnimationFrame(tick);
      else resolve();
    };
    requestAnimationFrame(tick);
  });
  const gaps = frames.slice(1).map((t, i) => t - (frames[i] as number));
  gaps.sort((a, b) => a - b);
  const seconds = ((frames.at(-1) as number) - (frames[0] as number)) / 1000;
  return {
    fps: (frames.length - 1) / seconds,
    p95FrameMs: gaps[Math.floor(gaps.length * 0.95)] as number,
    redraws: Number((svg.parentElement as HTMLElement).dataset.draws) - drawsBefore,
    seconds,
  };
}
