// Wireshark display filters for one tcplens flow: its two endpoints and its frame range (a
// 5-tuple can carry several connections one after the other; the frame range keeps only ours).

export interface Endpoint {
  readonly address: string;
  readonly port: number;
  readonly ipv6: boolean;
}

/** "10.0.0.1:80" or "[2001:db8::1]:443" (also a bare "2001:db8::1:443" as a fallback). */
export function parseEndpoint(text: string): Endpoint | null {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(text);
  if (bracketed) return { address: bracketed[1] as string, port: Number(bracketed[2]), ipv6: true };
  const cut = text.lastIndexOf(":");
  if (cut <= 0) return null;
  const address = text.slice(0, cut);
  const port = Number(text.slice(cut + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535) return null;
  if (!/^[0-9a-fA-F:.]+$/.test(address)) return null;
  return { address, port, ipv6: address.includes(":") };
}

export function flowFilter(
  client: string,
  server: string,
  firstFrame?: number,
  lastFrame?: number,
): string | null {
  const a = parseEndpoint(client);
  const b = parseEndpoint(server);
  if (!a || !b) return null;
  const field = (e: Endpoint, side: "src" | "dst") =>
    `${e.ipv6 ? "ipv6" : "ip"}.${side}==${e.address}`;
  const oneWay = (x: Endpoint, y: Endpoint) =>
    `(${field(x, "src")} && tcp.srcport==${x.port} && ${field(y, "dst")} && tcp.dstport==${y.port})`;
  let filter = `tcp && (${oneWay(a, b)} || ${oneWay(b, a)})`;
  if (firstFrame && firstFrame > 0) filter += ` && frame.number>=${firstFrame}`;
  if (lastFrame && lastFrame > 0) filter += ` && frame.number<=${lastFrame}`;
  return filter;
}
