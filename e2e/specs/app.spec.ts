import type { Page } from "@playwright/test";
import { expect, test } from "../fixtures";

function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    // A signed-out visitor's session check answers 401 by design; the browser logs that.
    if (message.type() === "error" && !message.text().includes("401")) errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

test("a signed-out visitor lands on sign-in, which shows the server's health", async ({
  page,
  request,
}) => {
  const errors = collectConsoleErrors(page);
  const health = await (await request.get("/api/v1/health")).json();

  await page.goto("/");

  await expect(page).toHaveURL(/\/login\?next=%2F$/);
  await expect(page.getByRole("heading", { name: "Sign in to tcplens" })).toBeVisible();
  await expect(page.getByTestId("health")).toHaveText(
    `Server ok · database ok · version ${health.version}`,
  );
  expect(errors).toEqual([]);
});

test("a deep link into the app is served by the SPA and survives sign-in", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  const response = await page.goto("/captures/1/flows/2");
  expect(response?.status()).toBe(200);
  await expect(page).toHaveURL(/\/login\?next=%2Fcaptures%2F1%2Fflows%2F2$/);
  expect(errors).toEqual([]);
});

test("the theme toggle switches the page to dark colours", async ({ page }) => {
  await page.goto("/login");
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.getByRole("button", { name: "Theme: system" }).click();
  await expect(page.getByRole("button", { name: "Theme: light" })).toBeVisible();
  expect(await background()).toBe("rgb(247, 248, 250)");
  await page.getByRole("button", { name: "Theme: light" }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  expect(await background()).toBe("rgb(11, 12, 15)");
});
