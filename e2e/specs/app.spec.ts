import type { Page } from "@playwright/test";
import { expect, test } from "../fixtures";

function collectConsoleErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));
  return errors;
}

test("the app loads, shows the server's health and logs no errors", async ({ page, request }) => {
  const errors = collectConsoleErrors(page);
  const health = await (await request.get("/api/v1/health")).json();

  await page.goto("/");

  await expect(page.getByRole("heading", { name: "tcplens" })).toBeVisible();
  await expect(page.getByTestId("health")).toHaveText(
    `Server ok · database ok · version ${health.version}`,
  );
  expect(errors).toEqual([]);
});

test("a deep link into the app is served by the SPA", async ({ page }) => {
  const errors = collectConsoleErrors(page);
  const response = await page.goto("/captures/1/flows/2");
  expect(response?.status()).toBe(200);
  await expect(page.getByRole("heading", { name: "tcplens" })).toBeVisible();
  expect(errors).toEqual([]);
});

test("the theme toggle switches the page to dark colours", async ({ page }) => {
  await page.goto("/");
  const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.getByRole("button", { name: "Theme: system" }).click();
  await expect(page.getByRole("button", { name: "Theme: light" })).toBeVisible();
  expect(await background()).toBe("rgb(255, 255, 255)");
  await page.getByRole("button", { name: "Theme: light" }).click();
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  expect(await background()).toBe("rgb(13, 17, 23)");
});
