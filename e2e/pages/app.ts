// Page helpers for the specs: accounts, drag-and-drop of real capture files, screenshots.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { APIRequestContext, Browser, Locator, Page } from "@playwright/test";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
/** The shared test captures live next to the project (see /work/shared/captures/README.md). */
export const LAB = path.resolve(ROOT, "..", "shared", "captures", "lab");
export const SCREENSHOTS = path.resolve(import.meta.dirname, "..", "test-results", "screens");

export function labCapture(name: string): string | null {
  const file = path.join(LAB, name);
  return existsSync(file) ? file : null;
}

let accounts = 0;

/** A fresh e-mail address per call, unique across runs against the same server. */
export function newEmail(who: string): string {
  accounts += 1;
  return `${who}-${Date.now()}-${accounts}@example.com`;
}

export const PASSWORD = "correct horse battery staple";

/** Sign up through the UI (the sign-up form), ending signed in on the captures page. */
export async function signUpInBrowser(page: Page, email: string): Promise<void> {
  await page.goto("/signup");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("heading", { name: "Captures" }).waitFor();
}

/** Sign up through the API in a fresh browser context (another person's browser). */
export async function newSignedInPage(browser: Browser, baseURL: string, who: string) {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await signUpViaApi(context.request, newEmail(who));
  return { context, page };
}

/** Sign up through the API, then sign in (sign-up itself starts no session). */
export async function signUpViaApi(request: APIRequestContext, email: string): Promise<void> {
  for (const step of ["signup", "login"]) {
    const response = await request.post(`/api/v1/auth/${step}`, {
      data: { email, password: PASSWORD },
    });
    if (!response.ok())
      throw new Error(`${step} failed: ${response.status()} ${await response.text()}`);
  }
}

/**
 * Drop files on the page the way a desktop file manager does: dragenter, dragover and drop
 * events carrying a DataTransfer with File objects, dispatched on the page body.
 */
export async function dropFiles(page: Page, files: readonly string[]): Promise<void> {
  // The drop listener is the signed-in shell's (DropZone, with the main navigation): a drop
  // dispatched while the page still checks the session reaches no listener and is lost.
  await page.getByRole("navigation", { name: "Main" }).waitFor();
  const payload = files.map((file) => ({
    name: path.basename(file),
    base64: readFileSync(file).toString("base64"),
  }));
  const dataTransfer = await page.evaluateHandle((items) => {
    const transfer = new DataTransfer();
    for (const item of items) {
      const bytes = Uint8Array.from(atob(item.base64), (c) => c.charCodeAt(0));
      transfer.items.add(new File([bytes], item.name, { type: "application/vnd.tcpdump.pcap" }));
    }
    return transfer;
  }, payload);
  for (const type of ["dragenter", "dragover", "drop"]) {
    await page.dispatchEvent("body", type, { dataTransfer });
  }
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * The pixels of a graph's canvas as a data URL, and whether anything is painted on it (the app
 * exposes no draw counter: the test looks at the canvas itself).
 */
export async function canvasPixels(graph: Locator): Promise<{ image: string; painted: boolean }> {
  return graph
    .locator("canvas")
    .first()
    .evaluate((canvas: HTMLCanvasElement) => {
      const blank = document.createElement("canvas");
      blank.width = canvas.width;
      blank.height = canvas.height;
      const image = canvas.toDataURL();
      return { image, painted: image !== blank.toDataURL() };
    });
}
