// The main path of the product, in a real browser against the real app: drop a capture, watch it
// being analysed, read the diagnosis, sort the flows, share it, and check who may see it.

import type { BrowserContext, Page } from "@playwright/test";
import { expect, test } from "../fixtures";
import { dropFiles, labCapture, newEmail, screenshot, signUpInBrowser } from "../pages/app";

const RWND = labCapture("rwnd_small_upload.pcap");
const NO_REUSE = labCapture("no_reuse_uploads.pcap");

test.describe.configure({ mode: "serial" });
test.skip(
  RWND === null || NO_REUSE === null,
  "../shared/captures/lab is absent: these specs need the lab captures (CI always has them)",
);

// Alice's browser: she uploads and shares; the other people use browsers of their own.
let alice: BrowserContext;
let page: Page;
let captureUrl = "";

const aliceEmail = newEmail("alice");

test.beforeAll(async ({ browser }) => {
  alice = await browser.newContext({ baseURL: process.env.TCPLENS_E2E_BASE_URL });
  page = await alice.newPage();
  await signUpInBrowser(page, aliceEmail);
});

test.afterAll(async () => {
  await alice.close();
});

test("drop a capture, watch it analysed, read the diagnosis and the flow", async () => {
  test.setTimeout(240_000);
  await screenshot(page, "01-captures-empty");
  await recordProgressStates(page);
  await dropFiles(page, [RWND as string]);

  // (Timeouts are generous: the first analysis of a run may compile the numba kernels on a busy
  // machine.) The tray follows the upload; with one file the app opens its page, where the analysis
  // progress shows until the diagnosis replaces it.
  const tray = page.getByRole("region", { name: "Uploads" });
  await expect(tray.getByText("rwnd_small_upload.pcap")).toBeVisible();
  await page.waitForURL(/\/captures\/[0-9a-f-]{36}$/);
  captureUrl = new URL(page.url()).pathname;
  await expect(tray.getByText("Analysis complete")).toBeVisible({ timeout: 150_000 });
  await expect(tray.getByRole("progressbar")).toHaveAttribute("aria-valuenow", "100");
  // What the user watched: the upload's bytes first, then (as fast as this machine allows) the
  // wait for a worker and the analysis, in that order, ending complete.
  const states = await page.evaluate(() => (window as unknown as Progress).progressStates);
  console.log(`progress states seen: ${states.join(" → ")}`);
  expect(states[0]).toBe("uploading");
  expect(states.at(-1)).toBe("done");
  const order = ["uploading", "queued", "analysing", "done"];
  const ranks = states.map((state) => order.indexOf(state));
  expect(ranks).toEqual([...ranks].sort((a, b) => a - b));

  await expect(
    page.getByRole("heading", { level: 1, name: "rwnd_small_upload.pcap" }),
  ).toBeVisible();
  await expect(page.getByRole("heading", { name: "Diagnosis" })).toBeVisible();
  // The diagnosis leads with the receiver window and its numbers: the server's SO_RCVBUF=2048
  // left a 1448-byte window, which at a ~61 ms round trip caps the upload at ~191 kbit/s.
  const finding = page.locator(".finding").first();
  await expect(finding).toHaveAttribute("data-code", "receiver-window-limited");
  await expect(finding.getByRole("heading")).toContainText("Receiver window too small");
  await expect(finding).toContainText("1.4 KB");
  await expect(finding).toContainText("191 kbit/s");
  await expect(finding).toContainText("61 ms round trip");
  await expect(finding.locator(".finding__fix:not(.finding__if-fixed)")).toContainText("SO_RCVBUF");
  // Its evidence link opens flow 1 on the time range the finding is about.
  await expect(finding.getByRole("link", { name: /flow 1/ })).toHaveAttribute(
    "href",
    /\/captures\/[0-9a-f-]{36}\/flows\/1\?from=0\.06\d*&to=13\.\d+&finding=\d+$/,
  );
  // The flow table says what held the flow back.
  await expect(page.locator("tr[data-flow='1']")).toContainText("Receiver window");

  // The capture's facts as the reader found them (tshark counts 857 frames in this file).
  await expect(page.locator(".facts")).toContainText("857");

  // The one connection: a 300 KB HTTP POST from the client to the server on port 80.
  const row = page.locator("tr[data-flow='1']");
  await expect(row).toContainText("10.77.0.1:59368");
  await expect(row).toContainText("10.77.0.2:80");
  await expect(row).toContainText("307 kB");
  await expect(row).toContainText("60.8 ms");
  await expect(
    page.locator(".waterfall__row[data-flow='1'] rect[data-kind='handshake']"),
  ).toHaveCount(1);
  await screenshot(page, "02-capture-overview");

  // The finding's evidence opens the flow page on its time range, with the finding above the graphs.
  await finding.getByRole("link", { name: /flow 1/ }).click();
  await expect(page).toHaveURL(/\/flows\/1\?from=/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText(
    "10.77.0.1:59368 → 10.77.0.2:80",
  );
  await expect(page.getByRole("navigation", { name: "Breadcrumb" })).toContainText(
    "rwnd_small_upload.pcap",
  );
  await expect(page.locator(".finding").first()).toContainText("Receiver window too small");
  await screenshot(page, "07-flow-page");
});

test("the share link opens the same diagnosis without signing in", async ({ browser }) => {
  expect(captureUrl, "the first test uploaded a capture").not.toBe("");
  await page.goto(captureUrl);
  const diagnosis = (await page.locator(".diagnosis").textContent()) ?? "";
  expect(diagnosis).toContain("Diagnosis");

  await page.getByRole("button", { name: "Share" }).click();
  const dialog = page.getByRole("dialog", { name: "Share this analysis" });
  await dialog.getByLabel("Link expires after").selectOption({ label: "7 days" });
  await dialog.getByRole("button", { name: "Create link" }).click();
  const link = dialog.getByLabel(/Share link/);
  await expect(link).toHaveValue(/\/shared\/[A-Za-z0-9_-]{22,}$/);
  const shareUrl = await link.inputValue();
  await expect(dialog.getByRole("cell", { name: "active" })).toBeVisible();
  // By default the link opens the analysis only, and the dialog says so.
  await expect(dialog.getByText(/opens the analysis only \(no file download\)/)).toBeVisible();
  await expect(dialog.getByRole("cell", { name: "analysis only" })).toBeVisible();
  await screenshot(page, "03-share-dialog");
  await dialog.getByRole("button", { name: "Close" }).click();

  // A stranger's browser: no account, no cookie.
  const stranger = await browser.newContext();
  const strangerPage = await stranger.newPage();
  await strangerPage.goto(shareUrl);
  await expect(
    strangerPage.getByText("You are viewing a shared analysis, read-only."),
  ).toBeVisible();
  await expect(
    strangerPage.getByRole("heading", { level: 1, name: "rwnd_small_upload.pcap" }),
  ).toBeVisible();
  await expect(strangerPage.locator(".diagnosis")).toHaveText(diagnosis);
  await expect(strangerPage.locator("tr[data-flow='1']")).toContainText("10.77.0.1:59368");
  await expect(strangerPage.getByRole("button", { name: "Share" })).toHaveCount(0);
  await expect(strangerPage.getByRole("link", { name: "Download" })).toHaveCount(0);
  await screenshot(strangerPage, "04-shared-view");

  // Revoked, the link opens nothing any more, and says so (issue 30: share_revoked once the API
  // names it) without offering "your captures" to someone who has none here.
  await page.getByRole("button", { name: "Share" }).click();
  await dialog.getByRole("button", { name: "Revoke" }).click();
  await expect(dialog.getByRole("cell", { name: "revoked" })).toBeVisible();
  await strangerPage.reload();
  await expect(
    strangerPage.getByRole("heading", {
      name: /^This share link (was revoked|does not open anything)$/,
    }),
  ).toBeVisible();
  await expect(strangerPage.getByRole("link", { name: "Go to your captures" })).toHaveCount(0);
  await stranger.close();
});

test("the owner reviews every share link of the workspace and revokes one", async () => {
  expect(captureUrl, "the first test uploaded a capture").not.toBe("");
  const captureId = captureUrl.split("/").pop() as string;
  const csrf = (await alice.storageState()).cookies.find(
    (c) => c.name === "__Host-tcplens_csrf" || c.name === "tcplens_csrf",
  );
  const made = await page.request.post(`/api/v1/captures/${captureId}/shares`, {
    data: { expires_in_s: 2 * 86_400, allow_download: true },
    headers: { "X-CSRF-Token": csrf?.value ?? "" },
  });
  expect(made.status()).toBe(201);
  const { id, token, expires_at } = (await made.json()) as {
    id: string;
    token: string;
    expires_at: string;
  };

  await page.goto("/settings/members");
  const table = page.getByRole("table", { name: "Share links of this workspace" });
  // The one revoked in the dialog above, and the new one (oldest first).
  await expect(table.locator("tbody tr")).toHaveCount(2);
  const row = table.locator("tbody tr").nth(1);
  await expect(row.getByRole("link", { name: "rwnd_small_upload.pcap" })).toHaveAttribute(
    "href",
    `/captures/${captureId}`,
  );
  await expect(row).toContainText(aliceEmail);
  // The expiry the API gave the link, written as the page writes dates.
  const expires = await page.evaluate((iso) => new Date(iso).toLocaleString(), expires_at);
  await expect(row).toContainText(expires);
  await expect(row.getByRole("cell", { name: "analysis + file" })).toBeVisible();
  await expect(row.getByRole("cell", { name: "active" })).toBeVisible();
  await expect(
    table.locator("tbody tr").nth(0).getByRole("cell", { name: "revoked" }),
  ).toBeVisible();
  await screenshot(page, "08-workspace-share-links");

  await row.getByRole("button", { name: "Revoke this link to rwnd_small_upload.pcap" }).click();
  await expect(row.getByRole("cell", { name: "revoked" })).toBeVisible();
  await expect(table.getByRole("button", { name: /^Revoke/ })).toHaveCount(0);
  const shared = await page.request.get(`/api/v1/shared/${token}`);
  expect(shared.status()).toBe(410);
  const listed = await page.request.get(`/api/v1/captures/${captureId}/shares`);
  const revoked = ((await listed.json()) as { id: string; revoked_at: string | null }[]).find(
    (l) => l.id === id,
  );
  expect(revoked?.revoked_at).not.toBeNull();
});

test("someone from another workspace gets 'not found' for the capture's URL", async ({
  browser,
}) => {
  expect(captureUrl).not.toBe("");
  const mallory = await browser.newContext({ baseURL: process.env.TCPLENS_E2E_BASE_URL });
  const malloryPage = await mallory.newPage();
  await signUpInBrowser(malloryPage, newEmail("mallory"));
  await malloryPage.goto(captureUrl);
  await expect(malloryPage.getByRole("heading", { name: "Capture not found" })).toBeVisible();
  await expect(malloryPage.getByText("rwnd_small_upload.pcap")).toHaveCount(0);
  const api = await malloryPage.request.get(`/api/v1${captureUrl}`);
  expect(api.status()).toBe(404);
  await screenshot(malloryPage, "05-other-workspace-not-found");
  await mallory.close();
});

test("sort the flow table of a capture with many connections", async () => {
  test.setTimeout(240_000);
  await page.goto("/");
  await page.getByLabel("Choose capture files").setInputFiles(NO_REUSE as string);
  await page.waitForURL(/\/captures\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { name: "Flows" })).toBeVisible({ timeout: 150_000 });

  const rows = page.locator("tbody tr[data-flow]");
  await expect(rows).toHaveCount(8); // 8 uploads, each on a new connection
  const flowOrder = () =>
    rows.evaluateAll((trs) => trs.map((tr) => Number(tr.getAttribute("data-flow"))));
  const throughputColumn = () =>
    rows.evaluateAll((trs) => trs.map((tr) => tr.querySelectorAll("td")[6]?.textContent ?? ""));

  await page.getByRole("button", { name: /^#/ }).click();
  expect(await flowOrder()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  await page.getByRole("button", { name: /^#/ }).click();
  expect(await flowOrder()).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
  await expect(page).toHaveURL(/sort=id&order=desc/);

  // Throughput, biggest first: the figures in the column never increase going down.
  await page.getByRole("button", { name: /^Throughput/ }).click();
  const rates = (await throughputColumn()).map(bitsPerSecond);
  expect(rates.every(Number.isFinite)).toBe(true);
  expect(rates).toEqual([...rates].sort((a, b) => b - a));
  await expect(page.getByRole("columnheader", { name: /Throughput/ })).toHaveAttribute(
    "aria-sort",
    "descending",
  );
  // The waterfall has one row per connection: no reuse, visible at a glance.
  await expect(page.locator(".waterfall__row")).toHaveCount(8);
  await screenshot(page, "06-flow-table-sorted");
});

interface Progress {
  progressStates: string[];
}

/** Record every state the upload tray's progress goes through (data-state), in order. */
async function recordProgressStates(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as Progress).progressStates = seen;
    const note = () => {
      for (const element of document.querySelectorAll(".upload-tray [data-state]")) {
        const state = element.getAttribute("data-state") ?? "";
        if (seen.at(-1) !== state) seen.push(state);
      }
    };
    new MutationObserver(note).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ["data-state"],
    });
  });
}

function bitsPerSecond(text: string): number {
  const match = /([\d.]+)\s*(bit|kbit|Mbit|Gbit)\/s/.exec(text);
  if (!match) return Number.NaN;
  const scale = { bit: 1, kbit: 1e3, Mbit: 1e6, Gbit: 1e9 }[match[2] as "bit"];
  return Number(match[1]) * scale;
}
