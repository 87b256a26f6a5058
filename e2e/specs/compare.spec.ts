// Before and after in the browser: two captures of the lab's pair (10 GETs on 10 connections,
// then on one pooled connection) picked on the captures list, compared; then the other way round
// from a capture's "Compare with…", which reads as a regression. Screenshots at 1280×720 in the
// light and the dark theme.

import path from "node:path";
import type { BrowserContext, Page } from "@playwright/test";
import { expect, test } from "../fixtures";
import { newEmail, signUpInBrowser } from "../pages/app";
import { uploadAndAnalyse } from "../pages/flowCapture";

const PAIRS = path.resolve(import.meta.dirname, "..", "..", "backend", "tests", "data", "pairs");
const BEFORE = path.join(PAIRS, "pair_no_reuse_10_gets_40ms__before.pcap.gz");
const AFTER = path.join(PAIRS, "pair_no_reuse_10_gets_40ms__after.pcap.gz");
const SCREENS =
  process.env.TCPLENS_COMPARE_SCREENS ??
  path.resolve(import.meta.dirname, "..", "test-results", "screens");

test.describe.configure({ mode: "serial" });

let context: BrowserContext;

/** The CSRF token the API wants on uploads (the cookie is __Host- prefixed over https). */
async function csrfOf(ctx: BrowserContext): Promise<string> {
  const names = ["__Host-tcplens_csrf", "tcplens_csrf"];
  return (await ctx.cookies()).find((c) => names.includes(c.name))?.value ?? "";
}
let page: Page;
let beforeId = "";
let afterId = "";

async function shot(name: string) {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: path.join(SCREENS, `${name}-${scheme}.png`) });
  }
  await page.emulateMedia({ colorScheme: "light" });
}

test.beforeAll(async ({ browser }) => {
  // two uploads analysed by the worker (a loaded machine takes its time)
  test.setTimeout(600_000);
  context = await browser.newContext({
    baseURL: process.env.TCPLENS_E2E_BASE_URL,
    viewport: { width: 1280, height: 720 },
  });
  page = await context.newPage();
  await signUpInBrowser(page, newEmail("compare"));
  const csrf = await csrfOf(context);
  beforeId = await uploadAndAnalyse(page.request, csrf, BEFORE, 300_000);
  afterId = await uploadAndAnalyse(page.request, csrf, AFTER, 300_000);
});

test.afterAll(async () => {
  await context.close();
});

test("pick two captures on the list and read what the fix bought", async () => {
  test.setTimeout(120_000);
  await page.goto("/");
  await page
    .getByRole("checkbox", { name: "Select pair_no_reuse_10_gets_40ms__before.pcap.gz" })
    .check();
  await page
    .getByRole("checkbox", { name: "Select pair_no_reuse_10_gets_40ms__after.pcap.gz" })
    .check();
  await page.getByTestId("compare-picked").click();
  await expect(page).toHaveURL(`/compare?before=${beforeId}&after=${afterId}`);

  await expect(page.getByTestId("compare-speedup")).toContainText("× faster");
  const resolved = page.locator(".compare-finding[data-code='no-connection-reuse']");
  await expect(resolved).toHaveAttribute("data-status", "resolved");
  await expect(resolved).toContainText("192.0.2.2:8080");
  const row = page.getByTestId("compare-transfers").locator("tbody tr");
  await expect(row).toHaveCount(1);
  await expect(row).toContainText("192.0.2.2:8080");
  await expect(row).toContainText("10 → 1");
  await expect(page.locator(".compare-prediction")).toContainText(
    "Fixing no-connection-reuse was predicted to take",
  );
  // both transfers drawn by the Stevens graph, on one time axis
  for (const side of ["before", "after"]) {
    const graph = page.getByTestId(`compare-graph-${side}`);
    await expect(graph.getByTestId("graph-stevens")).toBeVisible();
  }
  await expect(page.getByTestId("compare-graph-before")).toContainText("10 connections");
  await expect(page.getByTestId("compare-graph-after")).toContainText("1 connection");
  await shot("compare-01-resolved");
  await page.evaluate(() =>
    document.getElementById("compare-graphs-title")?.scrollIntoView({ block: "start" }),
  );
  await shot("compare-02-graphs");
});

test("the finding carries its prediction, and compared the other way round it is a regression", async () => {
  await page.goto(`/captures/${beforeId}`);
  const finding = page.locator(".finding[data-code='no-connection-reuse']");
  await expect(finding.getByTestId("if-fixed")).toContainText("on one warm connection");
  await page.getByRole("link", { name: "Compare with…" }).click();
  await expect(page).toHaveURL(`/compare?after=${beforeId}`);
  await page.getByRole("combobox", { name: "Before" }).selectOption(afterId);
  await expect(page.getByTestId("compare-speedup")).toContainText("× slower");
  await expect(page.locator(".compare-finding[data-code='no-connection-reuse']")).toHaveAttribute(
    "data-status",
    "new",
  );
  await expect(page.getByTestId("compare-transfers")).toContainText("1 → 10");
  await shot("compare-03-regression");
});

test("two captures of different transfers are not compared", async () => {
  const csrf = await csrfOf(context);
  const other = await uploadAndAnalyse(
    page.request,
    csrf,
    path.join(PAIRS, "pair_rwnd_rcvbuf32k_get_30ms__after.pcap.gz"),
    300_000,
  );
  await page.goto(`/compare?before=${beforeId}&after=${other}`);
  await expect(page.getByTestId("compare-error")).toContainText("not a transfer of the same size");
});
