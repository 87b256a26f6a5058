import { defineConfig } from "@playwright/test";

// Debian's chromium: Playwright cannot download its own browser builds on these machines.
const CHROMIUM = process.env.TCPLENS_E2E_CHROMIUM ?? "/usr/bin/chromium";
/** Specs run at each viewport × theme below instead of once. */
const UX_SPECS = /ux\.spec\.ts$/;

export default defineConfig({
  testDir: "./specs",
  // Starts the real app (`tcplens serve`) with its own fresh embedded database; see global-setup.ts.
  globalSetup: "./global-setup.ts",
  fullyParallel: false,
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 30_000,
  reporter: process.env.CI ? [["list"]] : [["list"], ["html", { open: "never" }]],
  use: {
    headless: true,
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
      ],
    },
  },
  projects: [
    { name: "chromium", testIgnore: UX_SPECS, use: { browserName: "chromium" } },
    // The UI specs of issue 30 at the two laptop widths people use, in both themes.
    ...[
      { width: 1280, height: 720 },
      { width: 1440, height: 900 },
    ].flatMap((viewport) =>
      (["light", "dark"] as const).map((colorScheme) => ({
        name: `ux-${viewport.width}-${colorScheme}`,
        testMatch: UX_SPECS,
        use: { browserName: "chromium" as const, viewport, colorScheme },
      })),
    ),
  ],
});
