import { expect, test } from "../fixtures";
import { screenshot } from "../pages/app";

// The API explorer is served whole by the app (Swagger UI from the swagger-ui-dist package in the
// SPA build): it lists the operations with every request to another origin refused, as offline.
test("the API docs list the operations with no request leaving the app's origin", async ({
  page,
  baseURL,
}) => {
  const origin = new URL(baseURL ?? "").origin;
  const elsewhere: string[] = [];
  const failed: string[] = [];
  const errors: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin === origin) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  page.on("requestfailed", (request) => failed.push(request.url()));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(error.message));

  const schema = await (await page.request.get("/api/v1/openapi.json")).json();
  const operations = Object.values(schema.paths as Record<string, object>).flatMap((item) =>
    Object.keys(item),
  ).length;

  const response = await page.goto("/api/v1/docs");
  expect(response?.status()).toBe(200);
  expect(response?.headers()["content-security-policy"]).not.toContain("http");

  await expect(page.getByRole("heading", { name: /tcplens/ }).first()).toBeVisible();
  const blocks = page.locator(".opblock");
  await expect(blocks).toHaveCount(operations);
  await expect(
    page.locator(".opblock-summary-path", { hasText: /^\/api\/v1\/captures$/ }).first(),
  ).toBeVisible();
  await expect(page.locator(".opblock-summary-path", { hasText: "/api/v1/health" })).toBeVisible();

  await screenshot(page, "api-docs-offline");
  expect(elsewhere).toEqual([]);
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
});
