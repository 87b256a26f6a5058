// Performance of the flow graphs on a flow of a million packets, through the level-of-detail series
// endpoint, in this machine's headless Chromium. Prints the figures; fails when the first draw takes
// more than 300 ms from navigation (page.goto of the flow URL), or zoom/pan runs below 30 frames/s.
// A benchmark, not a test (its limits depend on the machine's load): `make bench BENCH=bench_graph`
// runs it (TCPLENS_BENCH=1); the e2e suite skips it.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { APIRequestContext } from "@playwright/test";
import { expect, test } from "../fixtures";
import { writeBulkTransferPcap } from "../pages/bulkTransfer";
import { signUp, uploadAndAnalyse } from "../pages/flowCapture";

// Tracing records the page while it runs: it would measure itself, not the graphs.
test.use({ trace: "off" });

const SEGMENTS = 500_000; // + as many ACKs: 1 000 103 packets in one flow
/** Page loads measured; the best counts (other tenants' load only ever slows a run down). */
const RUNS = 5;
/** The graphs' request size (frontend MAX_POINTS), the resolution of the stored overview. */
const GRAPH_POINTS = 16_000;

test("a 1M-packet flow: first draw ≤ 300 ms, zoom and pan ≥ 30 frames/s", async ({
  page,
  browser,
  baseURL,
}) => {
  test.skip(!process.env.TCPLENS_BENCH, "a benchmark: make bench BENCH=bench_graph runs it");
  test.setTimeout(600_000);
  const dir = mkdtempSync(path.join(tmpdir(), "tcplens-perf-"));
  try {
    const file = path.join(dir, "bulk-1M.pcap");
    const packets = writeBulkTransferPcap(file, SEGMENTS);
    const csrf = await signUp(page.request);
    const started = Date.now();
    const id = await uploadAndAnalyse(page.request, csrf, file, 480_000);
    const analysed = Date.now() - started;

    // From navigation: each run opens the flow URL in a fresh browser context (signed in), after
    // visits of the app's home page, so the app (HTML, bundle, compiled code) is cached as for
    // anyone who used it before while this flow's series are not: the first look at this flow. The machine is
    // shared (other builds and tests run beside this one): each figure is the best of RUNS runs,
    // the usual way to keep other tenants' load out of a benchmark; every run is printed.
    const signedIn = await page.context().storageState();
    const url = `/captures/${id}/flows/1?graph=tcptrace&direction=client_to_server`;
    const firsts: FirstDraw[] = [];
    const motions: Motion[] = [];
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ storageState: signedIn, baseURL });
      try {
        const fresh = await context.newPage();
        // Twice: Chromium keeps a script's compiled code from its second run on (V8 code cache),
        // as it has for anyone who used the app before.
        for (let visit = 0; visit < 2; visit++) {
          await fresh.goto("/");
          await fresh.waitForLoadState("networkidle");
        }
        // Waiting for the draw without polling the page (a locator assertion runs Playwright's
        // script in the page every few milliseconds, on the main thread the page needs).
        await fresh.addInitScript(firstDrawPromise);
        await fresh.goto(url);
        await fresh.evaluate(() => (window as unknown as FirstDrawWindow).tcplensFirstDraw);
        const graph = fresh.getByTestId("graph-tcptrace");
        await expect(graph).toHaveAttribute(
          "data-retransmission-count",
          String(Math.floor(SEGMENTS / 5000)),
        );
        firsts.push(await fresh.evaluate(measureFirstDraw));
        await fresh.waitForTimeout(500); // let the page settle (the URL write, late layout) before timing
        motions.push(await fresh.evaluate(measureMotion));
      } finally {
        await context.close();
      }
    }
    const first = firsts.reduce((a, b) =>
      b.firstDrawSinceNavigationMs < a.firstDrawSinceNavigationMs ? b : a,
    );
    const motion = motions.reduce((a, b) => (b.fps > a.fps ? b : a));
    const endpoint = await seriesLatency(page.request, `/api/v1/captures/${id}/flows/1/series`);

    console.log(
      [
        `graph performance, ${packets.toLocaleString("en-US")} packets in one flow (analysed in ${(analysed / 1000).toFixed(1)} s):`,
        `  first draw since navigation: ${first.firstDrawSinceNavigationMs.toFixed(0)} ms (series answered at ${first.seriesDoneMs.toFixed(0)} ms after a ${first.seriesMs.toFixed(0)} ms request, session check at ${first.sessionDoneMs.toFixed(0)} ms, draw ${first.firstDrawAfterDataMs.toFixed(0)} ms after the data, canvas ${first.canvasMs.toFixed(1)} ms)`,
        `  series endpoint from the API, median of ${endpoint.runs}: whole flow (overview) ${endpoint.overviewMs.toFixed(1)} ms, zoomed to a tenth ${endpoint.zoomedMs.toFixed(1)} ms`,
        `  runs: first draw since navigation ${firsts.map((f) => f.firstDrawSinceNavigationMs.toFixed(0)).join(" / ")} ms, zoom/pan ${motions.map((m) => m.fps.toFixed(1)).join(" / ")} frames/s`,
        `  zoom/pan: ${motion.fps.toFixed(1)} frames/s over ${motion.seconds.toFixed(1)} s, p95 frame ${motion.p95FrameMs.toFixed(1)} ms, ${motion.redraws} redraws`,
      ].join("\n"),
    );
    expect(first.firstDrawSinceNavigationMs).toBeLessThanOrEqual(300);
    expect(motion.fps).toBeGreaterThanOrEqual(30);
    expect(motion.redraws).toBeGreaterThanOrEqual(140);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

interface FirstDraw {
  seriesMs: number;
  seriesDoneMs: number;
  sessionDoneMs: number;
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

/**
 * The series endpoint as the API answers it (no browser): the whole flow at the graphs' resolution
 * (the overview stored at analysis time) and a tenth of the flow (reduced from the full series on
 * request). The API client keeps no HTTP cache, so every run is answered by the server.
 */
async function seriesLatency(request: APIRequestContext, path: string) {
  const runs = 5;
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const time = async (query: string) => {
    const started = performance.now();
    const response = await request.get(`${path}?${query}`);
    await response.body();
    expect(response.ok()).toBe(true);
    return performance.now() - started;
  };
  const overview: number[] = [];
  const zoomed: number[] = [];
  for (let run = 0; run < runs; run++) {
    overview.push(await time(`direction=client_to_server&max_points=${GRAPH_POINTS}`));
    zoomed.push(
      await time(`direction=client_to_server&max_points=${GRAPH_POINTS * 3}&from=2&to=2.5`),
    );
  }
  return { runs, overviewMs: median(overview), zoomedMs: median(zoomed) };
}

interface FirstDrawWindow {
  tcplensFirstDraw: Promise<void>;
  /** Every canvas redraw seen: when it began and how long until its script turn ended. */
  tcplensDraws: { startTime: number; ms: number }[];
}

/**
 * In the page, before its scripts: watch the canvas itself (the app exposes no draw counter).
 * Each graph redraw starts by clearing its canvas (frame/draw.ts prepareCanvas); what follows in
 * the same script turn is that redraw (and the rest of React's commit), so a microtask queued at
 * the clear ends it. Also a promise of the first redraw.
 */
function firstDrawPromise() {
  const w = window as unknown as FirstDrawWindow;
  w.tcplensDraws = [];
  let first: () => void = () => undefined;
  w.tcplensFirstDraw = new Promise<void>((resolve, reject) => {
    first = resolve;
    setTimeout(() => reject(new Error("no graph drawn within 60 s")), 60_000);
  });
  const clear = CanvasRenderingContext2D.prototype.clearRect;
  CanvasRenderingContext2D.prototype.clearRect = function (
    this: CanvasRenderingContext2D,
    ...args: [number, number, number, number]
  ) {
    const startTime = performance.now();
    queueMicrotask(() => {
      w.tcplensDraws.push({ startTime, ms: performance.now() - startTime });
      first();
    });
    return clear.apply(this, args);
  };
}

/** In the page: when the first draw came, after navigation and after the series data arrived. */
function measureFirstDraw(): FirstDraw {
  const series = performance
    .getEntriesByType("resource")
    .filter((e) => e.name.includes("/series?")) as PerformanceResourceTiming[];
  const dataAt = Math.max(...series.slice(0, 2).map((e) => e.responseEnd));
  const draw = (window as unknown as FirstDrawWindow).tcplensDraws[0] as {
    startTime: number;
    ms: number;
  };
  return {
    seriesMs: Math.max(...series.slice(0, 2).map((e) => e.responseEnd - e.startTime)),
    seriesDoneMs: dataAt,
    sessionDoneMs: Math.max(
      ...performance
        .getEntriesByType("resource")
        .filter((e) => e.name.endsWith("/auth/me"))
        .map((e) => (e as PerformanceResourceTiming).responseEnd),
    ),
    firstDrawAfterDataMs: draw.startTime - dataAt,
    firstDrawSinceNavigationMs: draw.startTime,
    canvasMs: draw.ms,
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
  const draws = (window as unknown as FirstDrawWindow).tcplensDraws;
  const drawsBefore = draws.length;
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
    redraws: draws.length - drawsBefore,
    seconds,
  };
}
