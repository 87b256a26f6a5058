// Accounts in the browser: sign out and in again, API tokens (shown once, usable, revocable),
// and adding a teammate to a workspace.

import { expect, test } from "../fixtures";
import {
  labCapture,
  newEmail,
  PASSWORD,
  screenshot,
  signUpInBrowser,
  signUpViaApi,
} from "../pages/app";

test("sign out, then sign in again and land where the link pointed", async ({ page }) => {
  const email = newEmail("dana");
  await signUpInBrowser(page, email);
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);

  await page.goto("/settings/tokens");
  await expect(page).toHaveURL(/\/login\?next=%2Fsettings%2Ftokens$/);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill("wrong password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert")).toBeVisible();
  await screenshot(page, "10-login-error");

  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/settings\/tokens$/);
  await expect(page.getByRole("heading", { name: "API tokens" })).toBeVisible();
});

test("sign-up with an address that has an account opens nothing and points to signing in", async ({
  page,
  browser,
  baseURL,
}) => {
  const email = newEmail("holly");
  const holly = await browser.newContext({ baseURL });
  await signUpViaApi(holly.request, email);
  await holly.close();

  await page.goto("/signup");
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill("another long passphrase of mine");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("alert")).toContainText("sign in with its password");
  await expect(page).toHaveURL(/\/signup/);
  expect((await page.request.get("/api/v1/auth/me")).status()).toBe(401);
});

test("an API token is shown once, uploads from a script, and stops working when revoked", async ({
  page,
  playwright,
  baseURL,
}) => {
  await signUpInBrowser(page, newEmail("erin"));
  await page.getByRole("link", { name: "API tokens" }).click();
  await page.getByLabel("Token name").fill("ci-nightly");
  await page.getByRole("button", { name: "Create token" }).click();

  const token = await page.getByLabel("Your new token").inputValue();
  expect(token.length).toBeGreaterThan(20);
  await expect(page.getByLabel("Upload with curl")).toHaveValue(
    new RegExp(
      `Authorization: Bearer ${token}[\\s\\S]*-F file=@slow.pcap ${baseURL}/api/v1/captures`,
    ),
  );
  await expect(page.getByLabel(/tcplens CLI/)).toHaveValue(
    `export TCPLENS_TOKEN=${token}\ntcplens upload slow.pcap --server ${baseURL} --wait`,
  );
  const row = page.getByRole("row", { name: /ci-nightly/ });
  await expect(row).toContainText("never");
  await screenshot(page, "11-api-token-created");

  // What the curl example does, from a client without the browser's cookies.
  const script = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
  });
  const capture = labCapture("rwnd_small_upload.pcap");
  if (capture) {
    const { readFileSync } = await import("node:fs");
    const upload = await script.post("/api/v1/captures?filename=from-ci.pcap", {
      data: readFileSync(capture),
      headers: { "Content-Type": "application/octet-stream" },
    });
    expect(upload.status()).toBe(202);
  } else {
    expect((await script.get("/api/v1/captures")).status()).toBe(200);
  }

  // Once the page is reloaded the secret is gone for good: only its prefix is listed.
  await page.reload();
  await expect(page.getByLabel("Your new token")).toHaveCount(0);
  await expect(page.getByRole("row", { name: /ci-nightly/ })).toContainText(token.slice(0, 6));

  await page.getByRole("button", { name: "Revoke ci-nightly" }).click();
  await expect(page.getByRole("row", { name: /ci-nightly/ })).toContainText("revoked");
  expect((await script.get("/api/v1/captures")).status()).toBe(401);
  await script.dispose();
});

test("an owner invites by e-mail; an address with an account and one without look alike", async ({
  page,
  browser,
  baseURL,
}) => {
  const teammate = newEmail("frank");
  const newcomer = newEmail("nobody");
  const frank = await browser.newContext({ baseURL });
  await signUpViaApi(frank.request, teammate);
  await signUpInBrowser(page, newEmail("grace"));
  await page.getByRole("link", { name: "Members" }).click();
  for (const email of [teammate, newcomer]) {
    await page.getByLabel("Invite by e-mail").fill(email);
    await page.getByRole("button", { name: "Invite", exact: true }).click();
    await expect(page.getByRole("row", { name: new RegExp(email) })).toContainText("invited");
  }
  await expect(page.getByRole("alert")).toHaveCount(0);
  await screenshot(page, "12-members");

  // Frank's next request takes the invitation up; the newcomer's stays until they sign up.
  expect((await frank.request.get("/api/v1/auth/me")).status()).toBe(200);
  await page.reload();
  await expect(page.getByRole("row", { name: new RegExp(teammate) })).toContainText("member");
  await expect(page.getByRole("row", { name: new RegExp(newcomer) })).toContainText("invited");
  await page.getByRole("button", { name: `Cancel the invitation of ${newcomer}` }).click();
  await expect(page.getByRole("row", { name: new RegExp(newcomer) })).toHaveCount(0);
  await frank.close();
});

test("a read-only token made in the browser cannot upload", async ({
  page,
  playwright,
  baseURL,
}) => {
  await signUpInBrowser(page, newEmail("ivan"));
  await page.getByRole("link", { name: "API tokens" }).click();
  await page.getByLabel("Token name").fill("dashboards");
  await page.getByLabel("Upload, delete and share captures").uncheck();
  await page.getByRole("button", { name: "Create token" }).click();
  const token = await page.getByLabel("Your new token").inputValue();
  await expect(page.getByRole("row", { name: /dashboards/ })).toContainText("captures:read");
  await expect(page.getByRole("row", { name: /dashboards/ })).not.toContainText("captures:write");
  await screenshot(page, "13-token-scopes");

  const script = await playwright.request.newContext({
    baseURL,
    extraHTTPHeaders: { Authorization: `Bearer ${token}` },
  });
  expect((await script.get("/api/v1/captures")).status()).toBe(200);
  const upload = await script.post("/api/v1/captures?filename=x.pcap", {
    data: Buffer.from("not even a capture"),
    headers: { "Content-Type": "application/octet-stream" },
  });
  expect(upload.status()).toBe(403);
  expect((await upload.json()).code).toBe("insufficient_scope");
  await script.dispose();
});

test("changing the password signs out the other browsers; sign out everywhere ends this one too", async ({
  page,
  browser,
  baseURL,
}) => {
  const email = newEmail("judy");
  await signUpInBrowser(page, email);
  const other = await browser.newContext({ baseURL });
  const otherPage = await other.newPage();
  await otherPage.goto("/login");
  await otherPage.getByLabel("E-mail").fill(email);
  await otherPage.getByLabel("Password").fill(PASSWORD);
  await otherPage.getByRole("button", { name: "Sign in" }).click();
  await otherPage.getByRole("heading", { name: "Captures" }).waitFor();

  await page.getByRole("link", { name: email }).click();
  await expect(page.getByRole("heading", { name: "Your account" })).toBeVisible();
  await page.getByLabel("Current password").fill(PASSWORD);
  await page.getByLabel("New password").fill("password1234");
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("alert")).toContainText("too easy to guess");
  const newPassword = "tangerine lighthouse velvet";
  await page.getByLabel("New password").fill(newPassword);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page.getByRole("status")).toContainText("Password changed");
  await screenshot(page, "14-account-password-changed");

  // This browser goes on (a new session id); the other one is signed out.
  await page.getByRole("link", { name: "Captures" }).click();
  await expect(page.getByRole("heading", { name: "Captures" })).toBeVisible();
  await otherPage.goto("/settings/tokens");
  await expect(otherPage).toHaveURL(/\/login/);

  await page.getByRole("link", { name: email }).click();
  await page.getByRole("button", { name: "Sign out everywhere" }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto("/settings/tokens");
  await expect(page).toHaveURL(/\/login/);
  await other.close();
});
