// A capture of many short connections for the list and flow-page specs: `flows` handshakes
// (SYN, SYN/ACK, ACK) from 10.8.0.1 to 10.8.0.2:80, each from its own client port, 1 ms apart.
// Different counts make different bytes (an upload of the same bytes is the same capture).

import { pcapBuffer, writeTcpRecord } from "./pcapWriter";

/** The pcap's bytes; the flows are numbered 1… in the order of their SYN. */
export function manyFlowsPcap(flows: number): Buffer {
  if (flows > 60_000) throw new Error("one client address has 60 000 ports to give");
  const out = pcapBuffer(3 * flows);
  let at = 24;
  let ident = 0;
  for (let i = 0; i < flows; i++) {
    const clientPort = 2000 + i;
    const clientIsn = 1000 + clientPort;
    const serverIsn = 9000 + clientPort;
    const ends = { client: [10, 8, 0, 1], server: [10, 8, 0, 2], clientPort, serverPort: 80 };
    for (const [offset, fromClient, flags, seq, ack] of [
      [0, true, 0x02, clientIsn, 0],
      [200, false, 0x12, serverIsn, clientIsn + 1],
      [400, true, 0x10, clientIsn + 1, serverIsn + 1],
    ] as const) {
      at = writeTcpRecord(out, at, {
        ...ends,
        micros: i * 1000 + offset,
        fromClient,
        flags,
        seq,
        ack,
        payload: 0,
        ident: ident++,
      });
    }
  }
  return out.subarray(0, at);
}

/**
 * One upload whose receiver's buffer fills: 10.8.0.1 sends 1000-byte segments to 10.8.0.2:80,
 * which acknowledges them with a window shrinking to zero (twice), then opens it again. Wireshark
 * flags each zero-window ACK (tcp.analysis.zero_window).
 */
export function zeroWindowPcap(): Buffer {
  const out = pcapBuffer(64);
  let at = 24;
  let ident = 0;
  let micros = 0;
  const ends = { client: [10, 8, 0, 1], server: [10, 8, 0, 2], clientPort: 3000, serverPort: 80 };
  const clientIsn = 100;
  const serverIsn = 900;
  const send = (fromClient: boolean, flags: number, seq: number, ack: number, extra = {}) => {
    at = writeTcpRecord(out, at, {
      ...ends,
      micros,
      fromClient,
      flags,
      seq,
      ack,
      payload: 0,
      ident: ident++,
      ...extra,
    });
    micros += 10_000;
  };
  send(true, 0x02, clientIsn, 0);
  send(false, 0x12, serverIsn, clientIsn + 1, { window: 3000 });
  send(true, 0x10, clientIsn + 1, serverIsn + 1);
  let next = clientIsn + 1;
  for (const round of [0, 1]) {
    for (let k = 0; k < 3; k++) {
      send(true, 0x18, next, serverIsn + 1, { payload: 1000 });
      next += 1000;
      send(false, 0x10, serverIsn + 1, next, { window: 2000 - 1000 * k });
    }
    micros += 200_000 * (round + 1); // the reader is slow: the window stays shut
    send(false, 0x10, serverIsn + 1, next, { window: 3000 }); // window update
  }
  send(true, 0x11, next, serverIsn + 1);
  send(false, 0x11, serverIsn + 1, next + 1);
  send(true, 0x10, next + 1, serverIsn + 2);
  return out.subarray(0, at);
}
