// Writing synthetic pcap files for the specs: the file header and IPv4/TCP packets over Ethernet
// with only headers captured (no payload bytes), as `tcpdump -s 54` records them.

/** Ethernet + IPv4 + TCP headers: what each record holds. */
export const SNAP = 54;

export interface TcpHeaderPacket {
  micros: number;
  fromClient: boolean;
  client: readonly number[];
  server: readonly number[];
  clientPort: number;
  serverPort: number;
  flags: number;
  seq: number;
  ack: number;
  /** Payload length the IP header announces (not captured). */
  payload: number;
  /** IP identification. */
  ident: number;
  /** Advertised receive window (no window scaling); 65 535 when not given. */
  window?: number;
}

/** RFC 791 header checksum. */
function ipChecksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < header.length; i += 2) sum += header.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** A buffer for `packets` records with the pcap file header written (microseconds, Ethernet). */
export function pcapBuffer(packets: number): Buffer {
  const out = Buffer.alloc(24 + packets * (16 + SNAP));
  out.writeUInt32LE(0xa1b2c3d4, 0);
  out.writeUInt16LE(2, 4);
  out.writeUInt16LE(4, 6);
  out.writeUInt32LE(SNAP, 16);
  out.writeUInt32LE(1, 20); // Ethernet
  return out;
}

/** Writes one record at `at`; returns where the next one goes. */
export function writeTcpRecord(out: Buffer, at: number, p: TcpHeaderPacket): number {
  const sec = Math.floor(p.micros / 1e6);
  out.writeUInt32LE(1_700_000_000 + sec, at);
  out.writeUInt32LE(p.micros - sec * 1e6, at + 4);
  out.writeUInt32LE(SNAP, at + 8);
  out.writeUInt32LE(SNAP + p.payload, at + 12);
  const f = at + 16;
  out.set(
    p.fromClient ? [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1] : [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2],
    f,
  );
  out.writeUInt16BE(0x0800, f + 12);
  const ip = f + 14;
  out.writeUInt8(0x45, ip);
  out.writeUInt16BE(40 + p.payload, ip + 2);
  out.writeUInt16BE(p.ident & 0xffff, ip + 4);
  out.writeUInt16BE(0x4000, ip + 6);
  out.writeUInt8(64, ip + 8);
  out.writeUInt8(6, ip + 9);
  out.set(p.fromClient ? p.client : p.server, ip + 12);
  out.set(p.fromClient ? p.server : p.client, ip + 16);
  out.writeUInt16BE(ipChecksum(out.subarray(ip, ip + 20)), ip + 10);
  const tcp = ip + 20;
  out.writeUInt16BE(p.fromClient ? p.clientPort : p.serverPort, tcp);
  out.writeUInt16BE(p.fromClient ? p.serverPort : p.clientPort, tcp + 2);
  out.writeUInt32BE(p.seq >>> 0, tcp + 4);
  out.writeUInt32BE(p.ack >>> 0, tcp + 8);
  out.writeUInt8(0x50, tcp + 12);
  out.writeUInt8(p.flags, tcp + 13);
  out.writeUInt16BE(p.window ?? 65535, tcp + 14);
  return at + 16 + SNAP;
}
