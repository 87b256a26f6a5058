import { describe, expect, it } from "vitest";
import { flowFilter, parseEndpoint } from "./filters";
import { cssColor, formatOffset, hexRows } from "./hex";

describe("flow display filter", () => {
  it("parses IPv4 and bracketed IPv6 endpoints", () => {
    expect(parseEndpoint("10.77.0.1:59368")).toEqual({
      address: "10.77.0.1",
      port: 59368,
      ipv6: false,
    });
    expect(parseEndpoint("[2001:db8::1]:443")).toEqual({
      address: "2001:db8::1",
      port: 443,
      ipv6: true,
    });
    expect(parseEndpoint("nonsense")).toBeNull();
    expect(parseEndpoint("1.2.3.4:99999")).toBeNull();
    expect(parseEndpoint("a b;c:80")).toBeNull();
  });

  it("matches both directions of the 4-tuple within the flow's frames", () => {
    expect(flowFilter("10.0.0.1:5000", "10.0.0.2:80", 3, 90)).toBe(
      "tcp && ((ip.src==10.0.0.1 && tcp.srcport==5000 && ip.dst==10.0.0.2 && tcp.dstport==80) || " +
        "(ip.src==10.0.0.2 && tcp.srcport==80 && ip.dst==10.0.0.1 && tcp.dstport==5000)) && frame.number>=3 && frame.number<=90",
    );
    expect(flowFilter("[::1]:1", "[::2]:2")).toContain("ipv6.src==::1");
  });
});

describe("hex view", () => {
  it("splits bytes into rows of 16 with printable ASCII", () => {
    const bytes = new Uint8Array([0x47, 0x45, 0x54, 0x20, ...new Array(14).fill(0)]);
    const rows = hexRows(bytes);
    expect(rows).toHaveLength(2);
    expect(rows[0]?.hex.slice(0, 4)).toEqual(["47", "45", "54", "20"]);
    expect(rows[0]?.ascii.slice(0, 5)).toBe("GET .");
    expect(rows[1]?.offset).toBe(16);
    expect(formatOffset(16)).toBe("0010");
    expect(cssColor(0xe7e6ff)).toBe("#e7e6ff");
  });
});
