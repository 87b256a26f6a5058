// SACK blocks (RFC 2018) of the receiver's ACKs, as tcptrace draws them: at the ACK's time, a bar
// over each block [left, right) of data the receiver holds beyond the cumulative ACK. An ACK
// carries up to 4 blocks (3 beside timestamps); each is its own bar with tcptrace's end ticks, so
// the blocks of one ACK read as separate islands above the gaps the sender has to fill.

import type { PlotArea } from "../frame/types";
import type { DirectionSeries } from "../series/columns";

export interface SackBlock {
  readonly row: number;
  readonly time: number;
  readonly frame: number;
  /** Which block of its packet (0 = the first, the most recently received data). */
  readonly index: number;
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
      blocks.push({
        row: i,
        time: acks.time[i] as number,
        frame: acks.frame[i] as number,
        index: k,
        left,
        right,
      });
    }
  }
  return blocks;
}

/** One block on screen: a vertical bar at `x` from `bottom` (left edge) up to `top` (right edge). */
export interface SackBar {
  readonly block: SackBlock;
  readonly x: number;
  readonly top: number;
  readonly bottom: number;
}

/** Half width of the end ticks, px. */
export const SACK_TICK_PX = 2;

/** Pixel geometry of the blocks: at least one pixel tall, so a one-segment block still shows. */
export function sackBars(blocks: readonly SackBlock[], area: PlotArea): SackBar[] {
  return blocks.map((block) => {
    const bottom = area.y(block.left);
    return {
      block,
      x: Math.round(area.x(block.time)) + 0.5,
      top: Math.min(area.y(block.right), bottom - 1),
      bottom,
    };
  });
}
