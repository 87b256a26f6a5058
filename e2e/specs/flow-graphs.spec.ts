// The flow page on real lab captures: the tcptrace graph shows every window-full and retransmission
// mark Wireshark reports, a click on a mark opens that packet in Wireshark's own dissection (Wiregasm
// in the browser), and every graph renders. Screenshots go to test-results/screens/.

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Page } from "@playwright/test";
import { expect, test } from "../fixtures";
import { canvasPixels, labCapture, screenshot } from "../pages/app";
import {
  flowsOf,
  oracleCount,
  seriesEventCount,
  seriesResentCount,
  signUp,
  uploadAndAnalyse,
} from "../pages/flowCapture";

/** SACK blocks in the packets `filter` selects, as TShark decodes them (tcp.options.sack.count). */
function tsharkSackBlocks(capture: string, filter: string): number {
  const out = execFileSync(
    "tshark",
    [
      "-r",
      capture,
      "-Y",
      `${filter} && tcp.options.sack_le`,
      "-T",
      "fields",
      "-e",
      "tcp.options.sack.count",
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  return out
    .split("\n")
    .filter((line) => line.trim() !== "")
    .reduce((sum, line) => sum + Number(line.trim()), 0);
}

const RWND = labCapture("rwnd_small_upload.pcap");
const LOSSY = labCapture("lossy_download.pcap");

test.skip(
  RWND === null || LOSSY === null,
  "../shared/captures/lab is absent: these specs need the lab captures (CI always has them)",
);
test.describe.configure({ mode: "serial" });

function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  return errors;
}

test("rwnd_small_upload: window-full marks as Wireshark counts them; a click opens the packet in Wiregasm", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const errors = collectErrors(page);
  const csrf = await signUp(page.request);
  const id = await uploadAndAnalyse(page.request, csrf, RWND as string);
  const [flow] = await flowsOf(page.request, id);
  expect(flow?.client).toBe("10.77.0.1:59368");

  await page.goto(`/captures/${id}/flows/1?graph=tcptrace&direction=client_to_server`);
  const graph = page.getByTestId("graph-tcptrace");
  // TShark flags 420 frames of stream 0 "TCP window specified by the receiver is now completely full".
  const expected = oracleCount("rwnd_small_upload.pcap", 0, "window_full");
  expect(expected).toBe(420);
  await expect(graph).toHaveAttribute("data-window-full-count", String(expected));
  await expect(graph).toHaveAttribute("data-retransmission-count", "0");
  await expect(graph).toHaveAttribute("data-syn-count", "1");
  await expect(page.locator(".chart-legend")).toContainText("Window full×420");
  await screenshot(page, "graphs-01-tcptrace-whole-flow");

  // A link from the diagnosis names its finding (finding=<rank>, 1-based as the API ranks them): its evidence is drawn stronger.
  await page.goto(`/captures/${id}/flows/1?graph=tcptrace&direction=client_to_server&finding=1`);
  await expect(page.locator(".chart-evidence-highlighted").first()).toHaveAttribute(
    "data-evidence",
    "window full ×420",
  );

  // Zoom to 0.4 s: every segment is a bar hitting the window line, each with its mark.
  await page.goto(
    `/captures/${id}/flows/1?graph=tcptrace&direction=client_to_server&from=5&to=5.4`,
  );
  await expect(graph).toHaveAttribute("data-window-full-count", "13");
  const mark = page.locator("[data-kind='window_full']").first();
  const frame = await mark.getAttribute("data-frame");
  // (hovered again if the chart moved under the pointer while the page was still laying out)
  await expect(async () => {
    await mark.hover();
    await expect(page.getByRole("tooltip")).toContainText(
      "filled the receiver's advertised window",
      { timeout: 1_000 },
    );
  }).toPass({ timeout: 15_000 });
  await mark.click();
  await expect(page).toHaveURL(new RegExp(`frame=${frame}`));
  // Wiregasm loads (progress shown), dissects the capture and shows Wireshark's expert info.
  const tree = page.getByTestId("packet-tree");
  await expect(tree).toContainText("TCP window specified by the receiver is now completely full", {
    timeout: 90_000,
  });
  await expect(tree).toContainText(`Frame ${frame}:`);
  await expect(page.getByTestId("packet-list").locator(".packet-row.selected")).toContainText(
    "[TCP Window Full]",
  );
  await expect(page.getByTestId("packet-bytes")).toContainText("0000");
  await screenshot(page, "graphs-02-tcptrace-zoomed-wiregasm");

  // One Wiregasm worker for the open capture, terminated once the page has left the capture's
  // flows (after session.ts's RELEASE_DELAY_MS, 3 s, which spares a move between two flows).
  const wiregasmWorkers = () => page.workers().filter((w) => w.url().includes("wiregasm-worker"));
  expect(wiregasmWorkers()).toHaveLength(1);
  const closed = new Promise<void>((resolve) =>
    wiregasmWorkers()[0]?.once("close", () => resolve()),
  );
  await page.getByRole("navigation", { name: "Breadcrumb" }).getByRole("link").click();
  await expect(page).toHaveURL(new RegExp(`/captures/${id}$`));
  await Promise.race([
    closed,
    page.waitForTimeout(15_000).then(() => {
      throw new Error("the Wiregasm worker was still running 15 s after leaving the flow page");
    }),
  ]);
  expect(wiregasmWorkers()).toHaveLength(0);
  expect(errors).toEqual([]);
});

test("lossy_download: retransmissions in red, duplicate ACKs ticked, as many as the analysis found", async ({
  page,
}) => {
  test.setTimeout(120_000);
  const errors = collectErrors(page);
  const csrf = await signUp(page.request);
  const id = await uploadAndAnalyse(page.request, csrf, LOSSY as string);
  await page.goto(`/captures/${id}/flows/1?graph=tcptrace&direction=server_to_client`);
  const graph = page.getByTestId("graph-tcptrace");
  await expect(graph).toHaveAttribute("data-retransmission-count", /\d+/);

  // The marks are exactly the series' rows, whatever the level of detail kept: every re-sent
  // segment (67, the flow's `retransmissions` and the loss finding's count) and the duplicate ACKs.
  const retransmissions = await seriesResentCount(page.request, id, 1, "server_to_client");
  const dupAcks = await seriesEventCount(page.request, id, 1, "client_to_server", "duplicate_ack");
  await expect(graph).toHaveAttribute("data-retransmission-count", String(retransmissions));
  await expect(graph).toHaveAttribute("data-duplicate-ack-count", String(dupAcks));
  expect(retransmissions).toBe(67);
  // The events stay Wireshark's: it flags 4 of them `retransmission` (the rest `out_of_order`,
  // its timing heuristic at a sender capture), and 193 duplicate ACKs.
  const flagged = await seriesEventCount(page.request, id, 1, "server_to_client", "retransmission");
  expect(flagged).toBe(oracleCount("lossy_download.pcap", 0, "retransmission"));
  expect(dupAcks).toBe(oracleCount("lossy_download.pcap", 0, "duplicate_ack"));
  await screenshot(page, "graphs-03-lossy-tcptrace");

  // Every SACK block the client sent is drawn, not only the first of each packet: as many as
  // TShark reads in the client's packets of this stream.
  const sackBlocks = tsharkSackBlocks(LOSSY as string, "tcp.stream == 0 && ip.src == 10.77.0.1");
  expect(sackBlocks).toBeGreaterThan(oracleCount("lossy_download.pcap", 0, "duplicate_ack"));
  await expect(graph).toHaveAttribute("data-sack-block-count", String(sackBlocks));
  await expect(page.locator(".chart-legend")).toContainText(`SACK blocks×${sackBlocks}`);

  // The SVG export is vectors only: the dense layers as paths (segments blue, re-sent ones red,
  // SACK blocks purple), the marks as on screen, no embedded image.
  const [svgFile] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "SVG" }).click(),
  ]);
  const svg = readFileSync(await svgFile.path(), "utf8");
  expect(svg).not.toContain("<image");
  // Colours of the light theme (styles/theme.css --chart-*), the page's default here.
  for (const color of ["#1c64d6", "#d62728", "#9c36b5", "#2b8a3e"]) {
    expect(svg).toMatch(new RegExp(`<path d="M[^"]+" fill="none" stroke="${color}"`));
  }
  expect(svg).toContain('data-kind="retransmission"');
  expect(svg).toContain('data-kind="duplicate_ack"');

  // The series in view export as CSV, both directions, one row per packet, in the API's names.
  const [csv] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "CSV" }).click(),
  ]);
  const lines = readFileSync(await csv.path(), "utf8")
    .trim()
    .split("\n");
  expect(lines[0]).toBe(
    "direction,time_s,frame,seq,payload_len,ack,window,bytes_in_flight,flags,events",
  );
  expect(lines.filter((l) => l.includes(",retransmission")).length).toBe(flagged);
  // And the view as a PNG image.
  const [png] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "PNG" }).click(),
  ]);
  expect(
    readFileSync(await png.path())
      .subarray(1, 4)
      .toString(),
  ).toBe("PNG");

  // Zoomed into 0.2 s, the loss finding's label still names it; a click zooms out to the span of
  // all its evidence (here most of the flow: the whole view, so from/to leave the URL).
  await page.goto(
    `/captures/${id}/flows/1?graph=tcptrace&direction=server_to_client&from=1&to=1.2`,
  );
  await expect(page).toHaveURL(/from=1&to=1\.2/);
  await page.getByRole("button", { name: /^retransmissions ×\d+$/ }).click();
  await expect(page).not.toHaveURL(/from=/);
  await expect(page.getByText("(whole flow)")).toBeVisible();

  for (const graphKind of ["stevens", "throughput", "rtt", "inflight"] as const) {
    await page
      .getByRole("tab", {
        name: new RegExp(graphKind === "inflight" ? "In flight" : graphKind, "i"),
      })
      .click();
    await expect(page).toHaveURL(new RegExp(`graph=${graphKind}`));
    await expect
      .poll(async () => (await canvasPixels(page.getByTestId(`graph-${graphKind}`))).painted)
      .toBe(true);
    await screenshot(page, `graphs-04-lossy-${graphKind}`);
  }

  // The system turns dark: every graph redraws its canvas in the dark theme's colours (read from
  // styles/theme.css), and the SVG export paints those too.
  for (const graphKind of ["inflight", "rtt", "throughput", "stevens", "tcptrace"] as const) {
    if (graphKind !== "inflight") {
      await page.getByRole("tab", { name: new RegExp(graphKind, "i") }).click();
    }
    const shown = page.getByTestId(`graph-${graphKind}`);
    await expect.poll(async () => (await canvasPixels(shown)).painted).toBe(true);
    if (graphKind === "inflight") {
      const before = (await canvasPixels(shown)).image;
      await page.emulateMedia({ colorScheme: "dark" });
      await expect.poll(async () => (await canvasPixels(shown)).image).not.toBe(before);
    }
    await screenshot(page, `graphs-05-dark-${graphKind}`);
  }
  const [darkSvg] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "SVG" }).click(),
  ]);
  const dark = readFileSync(await darkSvg.path(), "utf8");
  for (const color of ["#6aa5ff", "#ff6b6b", "#c084fc", "#51cf66"]) {
    expect(dark).toMatch(new RegExp(`<path d="M[^"]+" fill="none" stroke="${color}"`));
  }
  expect(dark).not.toContain('stroke="#1c64d6"');
  expect(errors).toEqual([]);
});
