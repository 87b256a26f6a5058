import { afterEach, describe, expect, it, vi } from "vitest";
import { arrivedSeries, fetchSeries, MAX_POINTS, prefetchFlowOverview } from "./fetchSeries";

const answer = (times: number[]) =>
  new Response(JSON.stringify({ columns: { time_s: times }, reduced: true }), { status: 200 });

describe("the flow page's first request, started early", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("asks for both directions of the whole flow once, and hands the answers to the page", async () => {
    const fetchMock = vi.fn(async (url: string) =>
      answer(url.includes("client_to_server") ? [0, 1, 2] : [0.5]),
    );
    vi.stubGlobal("fetch", fetchMock);
    prefetchFlowOverview("/captures/3f0c/flows/7");
    expect(fetchMock.mock.calls.map((c) => c[0])).toEqual([
      `/api/v1/captures/3f0c/flows/7/series?direction=client_to_server&max_points=${MAX_POINTS}`,
      `/api/v1/captures/3f0c/flows/7/series?direction=server_to_client&max_points=${MAX_POINTS}`,
    ]);
    const request = {
      capturePath: "/api/v1/captures/3f0c",
      flowId: 7,
      direction: "client_to_server" as const,
      range: null,
      maxPoints: MAX_POINTS,
    };
    const series = await fetchSeries(request);
    expect(series.length).toBe(3);
    expect(series.reduced).toBe(true);
    // Arrived: available synchronously for the first render, and no second request.
    expect(arrivedSeries(request)).toBe(series);
    expect(fetchMock).toHaveBeenCalledTimes(2);
    // A zoomed request is not the early one.
    await fetchSeries({ ...request, range: { from: 0, to: 1 } });
    expect(fetchMock).toHaveBeenCalledTimes(3);
  });

  it("does nothing on other pages; shared flow pages go through the share link", () => {
    const fetchMock = vi.fn(async (_url: string) => answer([]));
    vi.stubGlobal("fetch", fetchMock);
    prefetchFlowOverview("/captures/3f0c");
    prefetchFlowOverview("/captures/3f0c/flows/0");
    prefetchFlowOverview("/settings/tokens");
    expect(fetchMock).not.toHaveBeenCalled();
    prefetchFlowOverview("/shared/tok_en/flows/2");
    expect(String(fetchMock.mock.calls[0]?.[0])).toMatch(
      /^\/api\/v1\/shared\/tok_en\/flows\/2\/series\?/,
    );
  });

  it("keeps a refused early request quiet until the page asks, then reports it", async () => {
    vi.stubGlobal(
      "fetch",
      vi.fn(
        async () => new Response(JSON.stringify({ detail: "Capture not found" }), { status: 404 }),
      ),
    );
    prefetchFlowOverview("/captures/gone/flows/1");
    const request = {
      capturePath: "/api/v1/captures/gone",
      flowId: 1,
      direction: "server_to_client" as const,
      range: null,
      maxPoints: MAX_POINTS,
    };
    await expect(fetchSeries(request)).rejects.toThrow("Capture not found");
    expect(arrivedSeries(request)).toBeUndefined();
  });
});
