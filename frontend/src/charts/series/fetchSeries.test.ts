import { QueryClient } from "@tanstack/react-query";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { flowPageOf, MAX_POINTS, prefetchFlowOverview, seriesQueryOptions } from "./fetchSeries";

// The API client takes the global fetch when it is created (module evaluation): replaced before.
const fetchMock = vi.hoisted(() => {
  const mock = vi.fn<(input: unknown) => Promise<Response>>();
  vi.stubGlobal("fetch", mock);
  return mock;
});

const answer = (times: number[]) =>
  new Response(JSON.stringify({ columns: { time_s: times }, reduced: true }), {
    status: 200,
    headers: { "Content-Type": "application/json" },
  });

const urlOf = (input: unknown) => (input instanceof Request ? input.url : String(input));

describe("the flow page's first request, started early", () => {
  beforeEach(() => fetchMock.mockReset());

  it("asks for both directions of the whole flow once, into the cache the page's query reads", async () => {
    fetchMock.mockImplementation(async (input: unknown) =>
      answer(urlOf(input).includes("client_to_server") ? [0, 1, 2] : [0.5]),
    );
    const client = new QueryClient();
    prefetchFlowOverview(client, "/captures/3f0c/flows/7");
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    expect(
      fetchMock.mock.calls.map((c) => new URL(urlOf(c[0])).pathname + new URL(urlOf(c[0])).search),
    ).toEqual([
      `/api/v1/captures/3f0c/flows/7/series?direction=client_to_server&max_points=${MAX_POINTS}`,
      `/api/v1/captures/3f0c/flows/7/series?direction=server_to_client&max_points=${MAX_POINTS}`,
    ]);
    const request = {
      scope: { kind: "capture" as const, captureId: "3f0c" },
      flowId: 7,
      direction: "client_to_server" as const,
      range: null,
      maxPoints: MAX_POINTS,
    };
    const series = await client.fetchQuery(seriesQueryOptions(request));
    expect(series.length).toBe(3);
    expect(series.reduced).toBe(true);
    // The page's query is answered from the cache: no second request.
    expect(fetchMock).toHaveBeenCalledTimes(2);
    // A zoomed request is another query.
    await client.fetchQuery(seriesQueryOptions({ ...request, range: { from: 0, to: 1 } }));
    expect(fetchMock).toHaveBeenCalledTimes(3);
    expect(urlOf(fetchMock.mock.calls[2]?.[0])).toMatch(/&from=0&to=1$/);
  });

  it("recognises flow pages only; shared flow pages go through the share link", () => {
    expect(flowPageOf("/captures/3f0c")).toBeNull();
    expect(flowPageOf("/captures/3f0c/flows/0")).toBeNull();
    expect(flowPageOf("/settings/tokens")).toBeNull();
    expect(flowPageOf("/shared/tok_en/flows/2")).toEqual({
      scope: { kind: "shared", token: "tok_en" },
      flowId: 2,
    });
  });

  it("keeps a refused early request quiet until the page asks, then reports the server's words", async () => {
    fetchMock.mockImplementation(
      async () =>
        new Response(JSON.stringify({ detail: "Capture not found", status: 404 }), {
          status: 404,
          headers: { "Content-Type": "application/problem+json" },
        }),
    );
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    prefetchFlowOverview(client, "/captures/gone/flows/1");
    const request = {
      scope: { kind: "capture" as const, captureId: "gone" },
      flowId: 1,
      direction: "server_to_client" as const,
      range: null,
      maxPoints: MAX_POINTS,
    };
    await expect(client.fetchQuery(seriesQueryOptions(request))).rejects.toThrow(
      "Capture not found",
    );
  });
});
