// The packets of one flow in Wireshark's dissection (Wiregasm in the browser): the page downloads
// that flow's packets only (the API's slice, …/flows/{id}/packets), never the whole capture, and
// shows every packet under the capture's own frame number, as TShark numbers it in the whole file.

import { execFileSync } from "node:child_process";
import { expect, test } from "../fixtures";
import { labCapture } from "../pages/app";
import { flowsOf, signUp, uploadAndAnalyse } from "../pages/flowCapture";

// 19 short uploads, one connection each, one after the other.
const NO_REUSE = labCapture("no_reuse_uploads.pcap");

test.skip(
  NO_REUSE === null,
  "../shared/captures/lab is absent: this spec needs the lab captures (CI always has them)",
);

/** The frames TShark puts in the TCP connection between two endpoints, ascending, with their
 * times from the capture's first packet (frame.time_relative). */
function tsharkFrames(
  capture: string,
  client: string,
  server: string,
): { number: number; time: number }[] {
  const [clientPort, serverPort] = [client, server].map((e) => e.slice(e.lastIndexOf(":") + 1));
  const out = execFileSync(
    "tshark",
    [
      "-r",
      capture,
      "-Y",
      `tcp.port==${clientPort} && tcp.port==${serverPort}`,
      "-T",
      "fields",
      "-e",
      "frame.number",
      "-e",
      "frame.time_relative",
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
  );
  return out
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [number, time] = line.split("\t").map(Number);
      return { number: number as number, time: time as number };
    });
}

test("a flow's packets come from its slice and keep the capture's frame numbers", async ({
  page,
  browser,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const csrf = await signUp(page.request);
  const id = await uploadAndAnalyse(page.request, csrf, NO_REUSE as string);
  const flows = await flowsOf(page.request, id);
  // A connection in the middle of the capture: its first frame is far from 1, so a frame number
  // of the slice (1, 2, …) and the capture's differ everywhere.
  const flow = flows[3];
  if (!flow) throw new Error("the capture has fewer than 4 flows");
  const tshark = tsharkFrames(NO_REUSE as string, flow.client, flow.server);
  const expected = tshark.map((f) => f.number);
  expect(expected[0]).toBeGreaterThan(expected.length);

  const asked: string[] = [];
  page.on("request", (request) => asked.push(new URL(request.url()).pathname));
  await page.goto(`/captures/${id}/flows/${flow.id}`);
  await page.getByRole("button", { name: "list this flow's packets" }).click();

  const list = page.getByTestId("packet-list");
  await expect(list).toHaveAttribute("data-matched", String(expected.length), {
    timeout: 90_000,
  });
  const numbers = list.locator(".packet-row .col-no");
  await expect(numbers.first()).toHaveText(String(expected[0]));
  const shown = (await numbers.allTextContents()).map(Number);
  expect(shown.length).toBeGreaterThan(5);
  expect(shown).toEqual(expected.slice(0, shown.length));
  // and the times count from the capture's first packet, as in TShark's view of the whole file
  const times = (await list.locator(".packet-row .col-time").allTextContents()).map(Number);
  expect(times[0]).toBeGreaterThan(1);
  times.forEach((t, k) => {
    expect(Math.abs(t - (tshark[k]?.time as number))).toBeLessThan(2e-6);
  });

  // A packet opened from the list: the URL and the dissection name the capture's frame.
  const third = expected[2] as number;
  await list.locator(".packet-row").nth(2).click();
  await expect(page).toHaveURL(new RegExp(`frame=${third}(&|$)`));
  const tree = page.getByTestId("packet-tree");
  await expect(tree).toContainText(`Frame ${third}:`);
  await expect(list.locator(".packet-row.selected .col-no")).toHaveText(String(third));

  // Only the flow's packets were downloaded, never the capture file.
  const flowPath = `/api/v1/captures/${id}/flows/${flow.id}`;
  expect(asked).toContain(`${flowPath}/packets`);
  expect(asked).toContain(`${flowPath}/frames`);
  expect(asked.filter((p) => p.endsWith(`/captures/${id}/file`))).toEqual([]);
  const slice = await page.request.get(`${flowPath}/packets`);
  expect(slice.headers()["x-tcplens-slice-frames"]).toBe(String(expected.length));

  // Through a share link that opens the analysis only, the payloads stay home: the panel says
  // why instead of offering the packets.
  const link = (await (
    await page.request.post(`/api/v1/captures/${id}/shares`, {
      data: { allow_download: false },
      headers: { "X-CSRF-Token": csrf },
    })
  ).json()) as { token: string };
  const visitor = await browser.newContext({ baseURL: baseURL as string });
  try {
    const shared = await visitor.newPage();
    await shared.goto(`/shared/${link.token}/flows/${flow.id}`);
    await expect(shared.getByLabel("Packet details")).toContainText("opens the analysis only");
    await expect(shared.getByRole("button", { name: "list this flow's packets" })).toHaveCount(0);
  } finally {
    await visitor.close();
  }
});
