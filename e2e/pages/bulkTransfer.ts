// A synthetic bulk transfer for the performance spec: one TCP connection carrying `segments` full
// segments client → server, each acknowledged, so the flow has 2 × segments + 3 packets. Every
// packet is captured with a 54-byte snaplen (Ethernet + IPv4 + TCP headers) while its IP total
// length says 1500, as `tcpdump -s 54` would record it: the file stays ~70 bytes per packet.
// Every 5 000th segment is sent twice (a retransmission), so the graph has marks to keep.

import { writeFileSync } from "node:fs";

const SNAP = 54;
const MSS = 1460;

function ipChecksum(header: Buffer): number {
  let sum = 0;
  for (let i = 0; i < header.length; i += 2) sum += header.readUInt16BE(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

export function writeBulkTransferPcap(file: string, segments: number): number {
  const packets = 2 * segments + 3 + Math.floor(segments / 5000);
  const out = Buffer.alloc(24 + packets * (16 + SNAP));
  out.writeUInt32LE(0xa1b2c3d4, 0);
  out.writeUInt16LE(2, 4);
  out.writeUInt16LE(4, 6);
  out.writeUInt32LE(SNAP, 16);
  out.writeUInt32LE(1, 20); // Ethernet
  let at = 24;
  let micros = 0;
  const client = [10, 9, 0, 1];
  const server = [10, 9, 0, 2];
  const clientIsn = 1000;
  const serverIsn = 5000;
  let written = 0;

  const packet = (
    fromClient: boolean,
    flags: number,
    seq: number,
    ack: number,
    payload: number,
  ) => {
    const sec = Math.floor(micros / 1e6);
    out.writeUInt32LE(1_700_000_000 + sec, at);
    out.writeUInt32LE(micros - sec * 1e6, at + 4);
    out.writeUInt32LE(SNAP, at + 8);
    out.writeUInt32LE(SNAP + payload, at + 12);
    const f = at + 16;
    out.set(
      fromClient ? [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1] : [2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2],
      f,
    );
    out.writeUInt16BE(0x0800, f + 12);
    const ip = f + 14;
    out.writeUInt8(0x45, ip);
    out.writeUInt16BE(40 + payload, ip + 2);
    out.writeUInt16BE(written & 0xffff, ip + 4);
    out.writeUInt16BE(0x4000, ip + 6);
    out.writeUInt8(64, ip + 8);
    out.writeUInt8(6, ip + 9);
    out.set(fromClient ? client : server, ip + 12);
    out.set(fromClient ? server : client, ip + 16);
    out.writeUInt16BE(ipChecksum(out.subarray(ip, ip + 20)), ip + 10);
    const tcp = ip + 20;
    out.writeUInt16BE(fromClient ? 40000 : 5001, tcp);
    out.writeUInt16BE(fromClient ? 5001 : 40000, tcp + 2);
    out.writeUInt32LE(0, tcp + 4);
    out.writeUInt32BE(seq >>> 0, tcp + 4);
    out.writeUInt32BE(ack >>> 0, tcp + 8);
    out.writeUInt8(0x50, tcp + 12);
    out.writeUInt8(flags, tcp + 13);
    out.writeUInt16BE(65535, tcp + 14);
    at += 16 + SNAP;
    written++;
  };

  packet(true, 0x02, clientIsn, 0, 0);
  micros += 20_000;
  packet(false, 0x12, serverIsn, clientIsn + 1, 0);
  micros += 20_000;
  packet(true, 0x10, clientIsn + 1, serverIsn + 1, 0);
  for (let i = 0; i < segments; i++) {
    const seq = clientIsn + 1 + i * MSS;
    micros += 5;
    packet(true, 0x18, seq, serverIsn + 1, MSS);
    if (i % 5000 === 4999) {
      micros += 5;
      packet(true, 0x18, seq, serverIsn + 1, MSS);
    }
    micros += 5;
    packet(false, 0x10, serverIsn + 1, seq + MSS, 0);
  }
  writeFileSync(file, out.subarray(0, at));
  return written;
}
