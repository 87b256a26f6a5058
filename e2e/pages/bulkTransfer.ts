// A synthetic bulk transfer for the performance spec: one TCP connection carrying `segments` full
// segments client → server, each acknowledged, so the flow has 2 × segments + 3 packets. Every
// packet is captured with a 54-byte snaplen (Ethernet + IPv4 + TCP headers) while its IP total
// length says 1500, as `tcpdump -s 54` would record it: the file stays ~70 bytes per packet.
// Every 5 000th segment is sent twice (a retransmission), so the graph has marks to keep.

import { writeFileSync } from "node:fs";
import { pcapBuffer, writeTcpRecord } from "./pcapWriter";

const MSS = 1460;

export function writeBulkTransferPcap(file: string, segments: number): number {
  const packets = 2 * segments + 3 + Math.floor(segments / 5000);
  const out = pcapBuffer(packets);
  let at = 24;
  let micros = 0;
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
    at = writeTcpRecord(out, at, {
      micros,
      fromClient,
      client: [10, 9, 0, 1],
      server: [10, 9, 0, 2],
      clientPort: 40000,
      serverPort: 5001,
      flags,
      seq,
      ack,
      payload,
      ident: written,
    });
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
