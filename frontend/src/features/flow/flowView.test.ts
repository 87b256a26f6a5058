import { describe, expect, it } from "vitest";
import { busiestDirection, readFlowView, writeFlowView } from "./flowView";

describe("flow view in the URL", () => {
  it("reads every parameter, with defaults for absent or invalid ones", () => {
    const v = readFlowView(
      new URLSearchParams("graph=rtt&direction=server_to_client&from=1.5&to=2&frame=42"),
      "client_to_server",
    );
    expect(v).toEqual({
      graph: "rtt",
      direction: "server_to_client",
      view: { from: 1.5, to: 2 },
      frame: 42,
    });
    const d = readFlowView(
      new URLSearchParams("graph=pie&direction=up&from=3&to=1&frame=-1"),
      "server_to_client",
    );
    expect(d).toEqual({
      graph: "tcptrace",
      direction: "server_to_client",
      view: null,
      frame: null,
    });
  });

  it("writes changes and keeps the other parameters", () => {
    const p = writeFlowView(new URLSearchParams("finding=2&from=1&to=2"), {
      view: null,
      graph: "stevens",
      frame: 7,
    });
    expect(p.toString()).toBe("finding=2&graph=stevens&frame=7");
    const q = writeFlowView(p, { view: { from: 0.25, to: 0.5 } });
    expect(q.get("from")).toBe("0.25");
    expect(q.get("to")).toBe("0.5");
  });

  it("defaults to the direction that carried the most bytes", () => {
    expect(busiestDirection({ bytes: { client_to_server: 10, server_to_client: 5_000_000 } })).toBe(
      "server_to_client",
    );
    expect(busiestDirection(undefined)).toBe("client_to_server");
  });
});
