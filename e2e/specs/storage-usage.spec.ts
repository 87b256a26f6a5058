// The captures page says how much of the workspace's storage quota its captures take.

import { statSync } from "node:fs";
import { expect, test } from "../fixtures";
import { dropFiles, labCapture, newEmail, screenshot, signUpInBrowser } from "../pages/app";

const NAGLE = labCapture("nagle_delack.pcap");

test("the captures page shows the workspace's storage against its quota", async ({ page }) => {
  test.skip(NAGLE === null, "../shared/captures/lab is absent: this spec needs the lab captures");
  await signUpInBrowser(page, newEmail("quota"));
  const usage = page.getByTestId("storage-usage");
  await expect(usage).toHaveText("0 B of 20.0 GB stored");

  await dropFiles(page, [NAGLE as string]);
  // One file dropped opens its capture; the list is one click back.
  await expect(page.getByRole("heading", { name: "nagle_delack.pcap" })).toBeVisible();
  await page.getByRole("link", { name: "Captures" }).click();
  const bytes = statSync(NAGLE as string).size; // 18,214
  await expect(usage).toHaveText(`${(bytes / 1000).toPrecision(3)} kB of 20.0 GB stored`);
  await expect(usage.locator("meter")).toHaveAttribute("value", String(bytes));
  await screenshot(page, "storage-usage");
});
