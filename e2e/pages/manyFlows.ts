// A capture of many short connections for the list and flow-page specs: `flows` handshakes
// (SYN, SYN/ACK, ACK) from 10.8.0.1 to 10.8.0.2:80, each from its own client port, 1 ms apart.
// Different counts make different bytes (an upload of the same bytes is the same capture).

import { writeFileSync } from "node:fs";

const PACKET = 54; // Ethernet + IPv4 + TCP headers, no payload

function ipChecksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < header.length; i += 2) sum += header.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/** The pcap's bytes; the flows are numbered 1… in the order of their SYN. */
export function manyFlowsPcap(flows: number): Buffer {
  if (flows > 60_000) throw new Error("one client address has 60 000 ports to give");
  const packets = 3 * flows;
  const out = Buffer.alloc(24 + packets * (16 + PACKET));
  out.writeUInt32LE(0xa1b2c3d4, 0);
  out.writeUInt16LE(2, 4);
  out.writeUInt16LE(4, 6);
  out.writeUInt32LE(PACKET, 16);
  out.writeUInt32LE(1, 20); // Ethernet
  let at = 24;
  let written = 0;
  const packet = (micros: number, port: number, fromClient: boolean, flags: number) => {
    const sec = Math.floor(micros / 1e6);
    out.writeUInt32LE(1_700_000_000 + sec, at);
    out.writeUInt32LE(micros - sec * 1e6, at + 4);
    out.writeUInt32LE(PACKET, at + 8);
    out.writeUInt32LE(PACKET, at + 12);
    const f = at + 16;
    out.set(
      fromClient ? [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1] : [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2],
      f,
    );
    out.writeUInt16BE(0x0800, f + 12);
    const ip = f + 14;
    out.writeUInt8(0x45, ip);
    out.writeUInt16BE(40, ip + 2);
    out.writeUInt16BE(written & 0xffff, ip + 4);
    out.writeUInt16BE(0x4000, ip + 6);
    out.writeUInt8(64, ip + 8);
    out.writeUInt8(6, ip + 9);
    out.set(fromClient ? [10, 8, 0, 1] : [10, 8, 0, 2], ip + 12);
    out.set(fromClient ? [10, 8, 0, 2] : [10, 8, 0, 1], ip + 16);
    out.writeUInt16BE(ipChecksum(out.subarray(ip, ip + 20)), ip + 10);
    const tcp = ip + 20;
    out.writeUInt16BE(fromClient ? port : 80, tcp);
    out.writeUInt16BE(fromClient ? 80 : port, tcp + 2);
    const clientIsn = 1000 + port;
    const serverIsn = 9000 + port;
    const [seq, ack] =
      flags === 0x02
        ? [clientIsn, 0]
        : flags === 0x12
          ? [serverIsn, clientIsn + 1]
          : [clientIsn + 1, serverIsn + 1];
    out.writeUInt32BE(seq >>> 0, tcp + 4);
    out.writeUInt32BE(ack >>> 0, tcp + 8);
    out.writeUInt8(0x50, tcp + 12);
    out.writeUInt8(flags, tcp + 13);
    out.writeUInt16BE(65535, tcp + 14);
    at += 16 + PACKET;
    written++;
  };
  for (let i = 0; i < flows; i++) {
    const port = 2000 + i;
    const start = i * 1000;
    packet(start, port, true, 0x02);
    packet(start + 200, port, false, 0x12);
    packet(start + 400, port, true, 0x10);
  }
  return out.subarray(0, at);
}

export function writeManyFlowsPcap(file: string, flows: number): void {
  writeFileSync(file, manyFlowsPcap(flows));
}
