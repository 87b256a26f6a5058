import { test as base, expect } from "@playwright/test";

// Every spec runs against the app that global-setup.ts started.
export const test = base.extend({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads fixture dependencies from this pattern
  baseURL: async ({}, use) => {
    const url = process.env.TCPLENS_E2E_BASE_URL;
    if (!url) throw new Error("TCPLENS_E2E_BASE_URL is unset: global-setup.ts did not run");
    await use(url);
  },
});

export { expect };
