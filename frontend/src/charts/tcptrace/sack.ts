// SACK blocks (RFC 2018) of the receiver's ACKs, as tcptrace draws them: at the ACK's time, a bar
// over each block [left, right) of data the receiver holds beyond the cumulative ACK.

import type { DirectionSeries } from "../series/columns";

export interface SackBlock {
  readonly row: number;
  readonly time: number;
  readonly left: number;
  readonly right: number;
}

export function sackBlocks(acks: DirectionSeries, lo = 0, hi = acks.length): SackBlock[] {
  const blocks: SackBlock[] = [];
  for (let i = lo; i < hi; i++) {
    const count = acks.sackCount[i] as number;
    for (let k = 0; k < acks.sackLeft.length; k++) {
      const left = acks.sackLeft[k]?.[i] as number;
      const right = acks.sackRight[k]?.[i] as number;
      // sack_count may be absent (0) while the edges are present: trust finite edges.
      if ((count > 0 && k >= count) || !Number.isFinite(left) || !(right > left)) continue;
      blocks.push({ row: i, time: acks.time[i] as number, left, right });
    }
  }
  return blocks;
}
