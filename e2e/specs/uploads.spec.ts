// Several files dropped at once: each gets its own progress, a file that is not a capture is
// refused in words, and the capture's waterfall shows the DNS wait before its connection.

import { writeFileSync } from "node:fs";
import { expect, test } from "../fixtures";
import { dropFiles, labCapture, newEmail, screenshot, signUpInBrowser } from "../pages/app";

const DNS = labCapture("dns_delay_upload.pcap");

test("drop a capture and a text file together: one is analysed, the other refused in words", async ({
  page,
}, testInfo) => {
  test.skip(DNS === null, "../shared/captures/lab is absent: this spec needs the lab captures");
  test.setTimeout(240_000);
  const notes = testInfo.outputPath("notes.txt");
  writeFileSync(notes, "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n".repeat(50));

  await signUpInBrowser(page, newEmail("heidi"));
  await dropFiles(page, [DNS as string, notes]);

  // Two files: the page stays on the list and the tray follows each of them.
  const tray = page.getByRole("region", { name: "Uploads" });
  const refused = tray.getByRole("alert");
  await expect(refused).toContainText("notes.txt is not a capture");
  await expect(refused).toContainText("pcapng");
  const row = page.getByRole("row", { name: /dns_delay_upload\.pcap/ });
  await expect(row.getByText("analysed")).toBeVisible({ timeout: 150_000 });
  await expect(page).toHaveURL(/\/$/);
  await screenshot(page, "20-two-files-dropped");

  await row.getByRole("link", { name: "dns_delay_upload.pcap" }).click();
  await expect(page.locator(".finding").first()).toHaveAttribute("data-code", "dns-delay");
  await expect(page.locator(".finding").first()).toContainText("3.0 s before connecting");
  // The connection starts 3 s into the capture, after the lookups: the waterfall draws that wait.
  const dns = page.locator(".waterfall__row[data-flow='1'] rect[data-kind='dns']");
  await expect(dns).toHaveCount(1);
  const handshake = page.locator(".waterfall__row[data-flow='1'] rect[data-kind='handshake']");
  const [dnsBox, handshakeBox] = [await dns.boundingBox(), await handshake.boundingBox()];
  expect(dnsBox && handshakeBox && dnsBox.width > 10 * handshakeBox.width).toBe(true);

  await page.getByRole("button", { name: /^Theme:/ }).click(); // system → light
  await page.getByRole("button", { name: /^Theme:/ }).click(); // light → dark
  await expect(page.locator("html")).toHaveAttribute("data-theme", "dark");
  await screenshot(page, "21-dns-capture-dark");
});
