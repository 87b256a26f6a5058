// Issue 30 items 5–8 in the browser, run by four projects (playwright.config.ts: 1280×720 and
// 1440×900, light and dark): the captures list for thousands of captures, a flow past the 5,000th,
// graph legends that show the drawn marks, and the small things (empty upload, a dead share link,
// the landing page). Screenshots of each go to /work/notes/screens/ (or TCPLENS_E2E_SCREENS).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { APIRequestContext, Browser, Locator, Page, TestInfo } from "@playwright/test";
import { expect, test } from "../fixtures";
import { dropFiles, labCapture, PASSWORD } from "../pages/app";
import { manyFlowsPcap, zeroWindowPcap } from "../pages/manyFlows";

const SCREENS = process.env.TCPLENS_E2E_SCREENS ?? "/work/notes/screens";
/** One owner for every project: the first project to run puts the captures in, the rest reuse them. */
const OWNER = "ux-owner@example.com";
const LONG_NAME =
  "production-load-balancer-eu-west-1a-ip-10-0-12-34-2026-12-06T19-44-46Z-upload-to-object-storage-was-slow-again.pcapng";
const SMALL_CAPTURES = 52; // more than one page of 50
const MANY_FLOWS = 5002;
const NAGLE = labCapture("nagle_delack.pcap");
const RWND = labCapture("rwnd_small_upload.pcap");
const LOSSY = labCapture("lossy_download.pcap");
const BOTTLENECK = labCapture("bottleneck_download.pcap");

test.skip(
  [NAGLE, RWND, LOSSY, BOTTLENECK].includes(null),
  "../shared/captures/lab is absent: these specs need the lab captures (CI always has them)",
);

async function shot(page: Page, info: TestInfo, name: string, show?: Locator): Promise<void> {
  mkdirSync(SCREENS, { recursive: true });
  // A graph is shown down to its legend (the bottom of the figure at the bottom of the window).
  await show?.evaluate((e) => e.scrollIntoView({ block: "end" }));
  await page.screenshot({ path: path.join(SCREENS, `${name}-${info.project.name}.png`) });
}

/** The CSRF cookie: `__Host-` prefixed over HTTPS, plain on http://127.0.0.1 (api/auth.py). */
function isCsrfCookie(cookie: { name: string }): boolean {
  return cookie.name === "__Host-tcplens_csrf" || cookie.name === "tcplens_csrf";
}

/** Signs the owner in (signing up the first time) in this request context; returns the CSRF token. */
async function signInOwner(request: APIRequestContext): Promise<string> {
  // The same answer whether or not an earlier project made the account already; then sign in.
  const up = await request.post("/api/v1/auth/signup", {
    data: { email: OWNER, password: PASSWORD },
  });
  expect(up.status(), await up.text()).toBe(202);
  for (;;) {
    const login = await request.post("/api/v1/auth/login", {
      data: { email: OWNER, password: PASSWORD },
    });
    if (login.status() === 429) {
      await new Promise((r) => setTimeout(r, 1000 * Number(login.headers()["retry-after"] ?? 2)));
      continue;
    }
    expect(login.ok(), await login.text()).toBe(true);
    break;
  }
  const csrf = (await request.storageState()).cookies.find(isCsrfCookie);
  if (!csrf) throw new Error("no CSRF cookie after signing in");
  return csrf.value;
}

interface CaptureRow {
  id: string;
  filename: string;
  size_bytes: number;
  status: string;
  top_finding: { code: string } | null;
}

/** Uploads bytes under a name, waiting out the upload rate limit (30 a minute) when it is hit. */
async function upload(
  request: APIRequestContext,
  csrf: string,
  name: string,
  data: Buffer,
): Promise<string> {
  for (;;) {
    const response = await request.post(`/api/v1/captures?filename=${encodeURIComponent(name)}`, {
      data,
      headers: { "Content-Type": "application/octet-stream", "X-CSRF-Token": csrf },
    });
    if (response.status() === 429) {
      await new Promise((r) =>
        setTimeout(r, 1000 * Number(response.headers()["retry-after"] ?? 2)),
      );
      continue;
    }
    expect(response.ok(), await response.text()).toBe(true);
    return ((await response.json()) as { capture: { id: string } }).capture.id;
  }
}

async function waitDone(request: APIRequestContext, id: string): Promise<void> {
  await expect
    .poll(
      async () =>
        ((await (await request.get(`/api/v1/captures/${id}`)).json()) as { status: string }).status,
      { timeout: 300_000, intervals: [500] },
    )
    .toBe("done");
}

async function listAll(request: APIRequestContext): Promise<CaptureRow[]> {
  const page = (await (await request.get("/api/v1/captures?limit=200")).json()) as {
    items: CaptureRow[];
  };
  return page.items;
}

/**
 * The owner's workspace, filled once: SMALL_CAPTURES small captures (1…n handshakes each), one
 * with a long name, the lab captures, and one of MANY_FLOWS connections. Returns name → id.
 */
async function ownerWorkspace(request: APIRequestContext): Promise<Map<string, string>> {
  const csrf = await signInOwner(request);
  const have = new Map((await listAll(request)).map((c) => [c.filename, c.id]));
  const want: [string, () => Buffer][] = [
    [LONG_NAME, () => manyFlowsPcap(SMALL_CAPTURES + 1)],
    ["zero-window-upload.pcap", zeroWindowPcap],
    ["five-thousand-and-two-flows.pcap", () => manyFlowsPcap(MANY_FLOWS)],
    ...[NAGLE, RWND, LOSSY, BOTTLENECK].map((file): [string, () => Buffer] => [
      path.basename(file as string),
      () => readFileSync(file as string),
    ]),
    ...Array.from({ length: SMALL_CAPTURES }, (_, i): [string, () => Buffer] => [
      `handshakes-${String(i + 1).padStart(2, "0")}.pcap`,
      () => manyFlowsPcap(i + 1),
    ]),
  ];
  for (const [name, bytes] of want) {
    if (!have.has(name)) have.set(name, await upload(request, csrf, name, bytes()));
  }
  for (const id of have.values()) await waitDone(request, id);
  return have;
}

/** This project's place among the four (unique bytes per project: equal bytes are one capture). */
function projectIndex(info: TestInfo): number {
  return ["ux-1280-light", "ux-1280-dark", "ux-1440-light", "ux-1440-dark"].indexOf(
    info.project.name,
  );
}

/** The page in the owner's browser (signed in once per worker: sign-ins are rate limited). */
async function ownerPage(browser: Browser, baseURL: string, info: TestInfo) {
  const context = await browser.newContext({
    baseURL,
    storageState: ownerState,
    viewport: info.project.use.viewport ?? null,
    colorScheme: info.project.use.colorScheme ?? "light",
  });
  return { context, page: await context.newPage() };
}

/** The CSRF token of the owner's session in `context`. */
async function csrfOf(request: APIRequestContext): Promise<string> {
  const csrf = (await request.storageState()).cookies.find(isCsrfCookie);
  if (!csrf) throw new Error("no CSRF cookie");
  return csrf.value;
}

let captures: Map<string, string>;
let ownerState: Awaited<ReturnType<APIRequestContext["storageState"]>>;

test.beforeAll(async ({ browser, baseURL }) => {
  test.setTimeout(900_000);
  const context = await browser.newContext({ baseURL: baseURL as string });
  try {
    captures = await ownerWorkspace(context.request);
    ownerState = await context.storageState();
  } finally {
    await context.close();
  }
});

/** Row texts of one column (1-based, counting the checkbox column) of the captures table. */
async function column(table: Locator, n: number): Promise<string[]> {
  return table.locator(`tbody tr td:nth-child(${n})`).allInnerTexts();
}

test("item 5: the captures list sorts, searches, pages and deletes on the server, and fits the page", async ({
  browser,
  baseURL,
}, info) => {
  test.setTimeout(240_000);
  const { context, page } = await ownerPage(browser, baseURL as string, info);
  try {
    await page.goto("/");
    const table = page.locator("table.captures-table");
    const total = captures.size;
    await expect(page.getByTestId("capture-count")).toHaveText(`${total} captures`);
    await expect(table.locator("tbody tr")).toHaveCount(50);
    await expect(page.getByTestId("page-of")).toContainText(`Page 1 of 2 (1–50 of ${total})`);

    // Nothing sticks out of the page at this width, not even the longest file name.
    await page.getByRole("button", { name: "Capture", exact: true }).click();
    await expect(page).toHaveURL(/sort=filename&order=asc/);
    await page.getByRole("button", { name: "Next" }).click();
    await expect(page.getByTestId("page-of")).toContainText("Page 2 of 2");
    await expect(page).toHaveURL(/page=2/);
    const longRow = table.locator("tbody tr", { hasText: LONG_NAME.slice(0, 30) });
    await expect(longRow).toHaveCount(1);
    const fits = await page.evaluate(() => {
      const scroller = document.querySelector(".table-scroll") as HTMLElement;
      const uploaded = document.querySelector(
        "table.captures-table thead th:last-child",
      ) as HTMLElement;
      return {
        overflow: scroller.scrollWidth - scroller.clientWidth,
        lastRight: uploaded.getBoundingClientRect().right,
        pageWidth: document.documentElement.clientWidth,
        bodyOverflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      };
    });
    expect(fits.overflow).toBeLessThanOrEqual(0);
    expect(fits.bodyOverflow).toBeLessThanOrEqual(0);
    expect(fits.lastRight).toBeLessThanOrEqual(fits.pageWidth);
    await shot(page, info, "captures-list-long-name");

    // Sorted by name, A→Z then Z→A, across the whole workspace (not only the rows on screen).
    await page.getByRole("button", { name: "Previous" }).click();
    const names = [...captures.keys()].sort((a, b) =>
      a.toLowerCase().localeCompare(b.toLowerCase()),
    );
    await expect.poll(async () => (await column(table, 2))[0]).toBe(names[0]);
    await page.getByRole("button", { name: "Capture", exact: true }).click();
    await expect(page).toHaveURL(/sort=filename&order=desc/);
    await expect.poll(async () => (await column(table, 2))[0]).toBe(names.at(-1));
    await expect(page.getByRole("columnheader", { name: "Capture", exact: true })).toHaveAttribute(
      "aria-sort",
      "descending",
    );
    // By size, biggest first, then smallest first: the extremes of the whole workspace.
    const all = await listAll(context.request); // every capture fits one page of 200
    expect(all.length).toBe(total);
    const bySize = [...all].sort((a, b) => b.size_bytes - a.size_bytes);
    await page.getByRole("button", { name: "Size", exact: true }).click();
    await expect(page).toHaveURL(/sort=size&order=desc/);
    await expect.poll(async () => (await column(table, 2))[0]).toBe(bySize[0]?.filename);
    await page.getByRole("button", { name: "Size", exact: true }).click();
    await expect.poll(async () => (await column(table, 2))[0]).toBe(bySize.at(-1)?.filename);

    // Search by name, then by finding (any finding's code or words of its title).
    await page.getByLabel("Name").fill("handshakes-0");
    await expect(page.getByTestId("capture-count")).toHaveText("9 captures found");
    await page.getByLabel("Name").fill("");
    await page.getByLabel("Finding").fill("nagle-delayed-ack");
    await expect(page.getByTestId("capture-count")).toHaveText("1 capture found");
    await expect(table.locator("tbody tr td:nth-child(2)")).toHaveText(["nagle_delack.pcap"]);
    await expect(page).toHaveURL(/finding=nagle-delayed-ack/);
    await shot(page, info, "captures-list-search-finding");
    await page.getByLabel("Finding").fill("");
    await expect(page.getByTestId("capture-count")).toHaveText(`${total} captures`);
  } finally {
    await context.close();
  }
});

test("item 5: bulk delete asks first, then deletes exactly the selected captures", async ({
  browser,
  baseURL,
}, info) => {
  const { context, page } = await ownerPage(browser, baseURL as string, info);
  try {
    const csrf = await csrfOf(context.request);
    const doomed = ["doomed-a", "doomed-b"].map((n) => `${n}-${info.project.name}.pcap`);
    for (const [k, name] of doomed.entries()) {
      await upload(context.request, csrf, name, manyFlowsPcap(100 + 2 * projectIndex(info) + k));
    }
    await page.goto(`/?q=doomed&sort=filename&order=asc`);
    const table = page.locator("table.captures-table");
    await expect(page.getByTestId("capture-count")).toContainText("captures found");
    for (const name of doomed) await page.getByRole("checkbox", { name: `Select ${name}` }).check();
    await page.getByRole("button", { name: "Delete 2 selected" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete 2 captures?" });
    await expect(dialog.getByRole("listitem")).toHaveText(doomed);
    await shot(page, info, "captures-list-bulk-delete");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect(table.locator("tbody tr", { hasText: doomed[0] as string })).toHaveCount(1);
    await page.getByRole("button", { name: "Delete 2 selected" }).click();
    await dialog.getByRole("button", { name: "Delete", exact: true }).click();
    await expect(dialog).toHaveCount(0);
    for (const name of doomed) {
      await expect(table.locator("tbody tr", { hasText: name })).toHaveCount(0);
    }
    const left = await listAll(context.request);
    expect(left.filter((c) => doomed.includes(c.filename))).toEqual([]);
    expect(left.length).toBeGreaterThanOrEqual(captures.size);
  } finally {
    await context.close();
  }
});

test("item 5: a row's status moves with the upload tray: never 'analysing' once the tray says done", async ({
  browser,
  baseURL,
}, info) => {
  test.setTimeout(180_000);
  const { context, page } = await ownerPage(browser, baseURL as string, info);
  const dir = mkdtempSync(path.join(tmpdir(), "tcplens-ux-"));
  try {
    await page.goto("/?sort=created&order=desc");
    // Two files, so the page stays on the list (one file opens its capture's page).
    const files = [0, 1].map((k) => {
      const file = path.join(dir, `live-${k}-${info.project.name}.pcap`);
      writeFileSync(file, manyFlowsPcap(200 + 2 * projectIndex(info) + k));
      return file;
    });
    await dropFiles(page, files);
    for (const file of files) {
      const name = path.basename(file);
      const tray = page.locator(".upload-tray__item", { hasText: name });
      await expect(tray.locator('.progress[data-state="done"]')).toBeVisible({ timeout: 120_000 });
      // Read at once, not retried: the row and the tray show the same query's answer.
      const status = await page
        .locator("table.captures-table tbody tr", { hasText: name })
        .locator("[data-status]")
        .getAttribute("data-status");
      expect(status).toBe("done");
    }
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("item 6: a flow past the 5,000th opens by its id", async ({ browser, baseURL }, info) => {
  const { context, page } = await ownerPage(browser, baseURL as string, info);
  try {
    const id = captures.get("five-thousand-and-two-flows.pcap") as string;
    await page.goto(`/captures/${id}/flows/${MANY_FLOWS}`);
    // The last connection: client port 2000 + 5001.
    await expect(page.getByRole("heading", { level: 1 })).toContainText("10.8.0.1:7001");
    await expect(page.getByRole("heading", { name: "Flow not found" })).toHaveCount(0);
    await page.goto(`/captures/${id}/flows/${MANY_FLOWS + 1}`);
    await expect(page.getByRole("heading", { name: "Flow not found" })).toBeVisible();
  } finally {
    await context.close();
  }
});

/** Width × height of the first SVG element `locator` finds (its drawn size). */
async function box(locator: Locator): Promise<[number, number]> {
  return locator.first().evaluate((e) => {
    const b = (e as SVGGraphicsElement).getBBox();
    return [Math.round(b.width * 10) / 10, Math.round(b.height * 10) / 10] as [number, number];
  });
}

test("item 7: legend symbols are the drawn marks; label and legend counts agree; BDP uses the bottleneck's rate", async ({
  browser,
  baseURL,
}, info) => {
  test.setTimeout(120_000);
  const { context, page } = await ownerPage(browser, baseURL as string, info);
  try {
    const legend = page.locator(".chart-legend");
    const marks = page.getByTestId("tcptrace-marks");

    // Retransmissions are drawn as dots: the legend shows that dot.
    const lossy = captures.get("lossy_download.pcap") as string;
    await page.goto(`/captures/${lossy}/flows/1?graph=tcptrace&direction=server_to_client`);
    await expect(marks.locator('[data-kind="retransmission"]').first()).toBeVisible();
    expect(await box(legend.locator('[data-legend="retransmission"] path'))).toEqual(
      await box(marks.locator('[data-kind="retransmission"]')),
    );

    // Window full: the band's label says as many as the legend counts for the whole flow.
    const rwnd = captures.get("rwnd_small_upload.pcap") as string;
    await page.goto(`/captures/${rwnd}/flows/1?graph=tcptrace&direction=client_to_server`);
    const windowFull = legend.locator('[data-legend="window_full"]');
    await expect(windowFull).toContainText(/×\d+/);
    const legendCount = (await windowFull.locator(".chart-legend-count").innerText()).slice(1);
    await expect(page.getByRole("button", { name: `window full ×${legendCount}` })).toBeVisible();
    expect(await box(windowFull.locator("path"))).toEqual(
      await box(marks.locator('[data-kind="window_full"]')),
    );
    await shot(page, info, "graphs-legend-window-full", page.locator(".chart-figure"));

    // Zero windows are drawn as triangles: the legend shows that triangle.
    const zero = captures.get("zero-window-upload.pcap") as string;
    await page.goto(`/captures/${zero}/flows/1?graph=tcptrace&direction=client_to_server`);
    const zeroMark = marks.locator('[data-kind="zero_window"]');
    await expect(zeroMark.first()).toBeVisible();
    expect(await box(legend.locator('[data-legend="zero_window"] path'))).toEqual(
      await box(zeroMark),
    );
    await shot(page, info, "graphs-legend-zero-window", page.locator(".chart-figure"));

    // The BDP line and the "bottleneck" label use the same rate.
    const bottleneck = captures.get("bottleneck_download.pcap") as string;
    const findings = (await (
      await context.request.get(`/api/v1/captures/${bottleneck}/findings`)
    ).json()) as { factor: string; flows: number[]; evidence: { rate_bps?: number } }[];
    const path_ = findings.find((f) => f.factor === "bandwidth" && f.evidence.rate_bps);
    expect(path_, "bottleneck_download has a bandwidth finding with its rate").toBeTruthy();
    const flow = path_?.flows[0] as number;
    await page.goto(
      `/captures/${bottleneck}/flows/${flow}?graph=inflight&direction=server_to_client`,
    );
    const graph = page.getByTestId("graph-inflight");
    await expect(graph).toHaveAttribute(
      "data-bdp-rate-bps",
      String(Math.round(path_?.evidence.rate_bps as number)),
    );
    const label = (await page.getByRole("button", { name: /^bottleneck / }).textContent()) ?? "";
    const rate = label.replace("bottleneck ", "");
    await expect(page.locator(".chart-line-label")).toContainText(`= ${rate} ×`);
    await shot(page, info, "graphs-legend-bdp", page.locator(".chart-figure"));
  } finally {
    await context.close();
  }
});

test("item 8: an empty upload says it is empty", async ({ browser, baseURL }, info) => {
  const { context, page } = await ownerPage(browser, baseURL as string, info);
  const dir = mkdtempSync(path.join(tmpdir(), "tcplens-ux-"));
  try {
    await page.goto("/");
    const empty = path.join(dir, "empty.pcap");
    writeFileSync(empty, Buffer.alloc(0));
    await dropFiles(page, [empty]);
    const tray = page.locator(".upload-tray__item", { hasText: "empty.pcap" });
    await expect(tray).toContainText("empty.pcap is empty");
    await expect(tray).not.toContainText("The request is not valid");
    await shot(page, info, "upload-empty");
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("item 8: a revoked share link says so, and offers no captures to a visitor", async ({
  browser,
  baseURL,
}, info) => {
  const { context } = await ownerPage(browser, baseURL as string, info);
  const visitor = await browser.newContext({
    baseURL: baseURL as string,
    viewport: info.project.use.viewport ?? null,
    colorScheme: info.project.use.colorScheme ?? "light",
  });
  try {
    const csrf = await csrfOf(context.request);
    const capture = captures.get("nagle_delack.pcap") as string;
    const shares = `/api/v1/captures/${capture}/shares`;
    const link = (await (
      await context.request.post(shares, { data: {}, headers: { "X-CSRF-Token": csrf } })
    ).json()) as { id: string; token: string };
    const revoked = await context.request.delete(`${shares}/${link.id}`, {
      headers: { "X-CSRF-Token": csrf },
    });
    expect(revoked.status()).toBe(204);
    // The words follow the API's problem code: share_revoked when it names the reason (the
    // shared API's codes), share_link_not_found before it did.
    const code = (
      (await (await visitor.request.get(`/api/v1/shared/${link.token}`)).json()) as {
        code: string;
      }
    ).code;
    const title =
      code === "share_revoked" || code === "share_link_revoked"
        ? "This share link was revoked"
        : "This share link does not open anything";
    const page = await visitor.newPage();
    await page.goto(`/shared/${link.token}`);
    await expect(page.getByRole("heading", { name: title })).toBeVisible();
    await expect(page.getByText("ask them for a share link")).toHaveCount(0);
    await expect(page.getByRole("link", { name: "Go to your captures" })).toHaveCount(0);
    await shot(page, info, "share-link-revoked");
  } finally {
    await visitor.close();
    await context.close();
  }
});

test("item 8: the landing page says what tcplens is, with a diagnosed capture, before the form", async ({
  browser,
  baseURL,
}, info) => {
  const visitor = await browser.newContext({
    baseURL: baseURL as string,
    viewport: info.project.use.viewport ?? null,
    colorScheme: info.project.use.colorScheme ?? "light",
  });
  try {
    const page = await visitor.newPage();
    await page.goto("/");
    await expect(page).toHaveURL(/\/login/);
    const intro = page.locator(".landing__intro");
    await expect(intro).toContainText("tcplens reads a packet capture");
    const picture = intro.getByRole("img", { name: /A capture diagnosed by tcplens/ });
    await expect(picture).toBeVisible();
    expect(await picture.evaluate((img) => (img as HTMLImageElement).naturalWidth)).toBeGreaterThan(
      600,
    );
    // The sentence comes before the form, in reading order.
    const order = await page.evaluate(() => {
      const sentence = document.querySelector(".landing__sentence") as Element;
      const form = document.querySelector("form") as Element;
      return sentence.compareDocumentPosition(form) & Node.DOCUMENT_POSITION_FOLLOWING;
    });
    expect(order).toBeTruthy();
    await shot(page, info, "landing");
  } finally {
    await visitor.close();
  }
});
