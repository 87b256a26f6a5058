// Stevens' graph (TCP/IP Illustrated, vol. 1): one dot per data segment at its time and starting
// sequence number. Dense stretches become one vertical stroke per pixel column (M4 of the dots).

import type { CanvasLayer } from "../frame/types";
import { m4Columns } from "../lod/m4";
import { visibleRange } from "../lod/visibleRange";
import type { DirectionSeries } from "../series/columns";

export const STEVENS_COLORS = {
  data: "var(--chart-data)",
  retransmission: "var(--chart-retransmission)",
} as const;

export function stevensLayer(data: DirectionSeries): CanvasLayer {
  const isData = (i: number) => (data.payloadLen[i] as number) > 0;
  const again = (i: number) => isData(i) && data.resent[i] === 1;
  return {
    id: "stevens",
    draw(ctx, area) {
      const [from, to] = area.x.domain() as [number, number];
      const { lo, hi } = visibleRange(data.time, from, to);
      const sparse = hi - lo < area.width / 3;
      for (const [filter, color] of [
        [(i: number) => isData(i) && !again(i), STEVENS_COLORS.data],
        [again, STEVENS_COLORS.retransmission],
      ] as const) {
        ctx.fillStyle = color;
        ctx.strokeStyle = color;
        // Retransmissions are few and are the point: always a dot of their own.
        if (sparse || color === STEVENS_COLORS.retransmission) {
          for (let i = lo; i < hi; i++) {
            if (!filter(i)) continue;
            ctx.beginPath();
            ctx.arc(
              area.x(data.time[i] as number),
              area.y(data.seq[i] as number),
              2.5,
              0,
              2 * Math.PI,
            );
            ctx.fill();
          }
        } else {
          ctx.lineWidth = 2;
          // Dots are not joined across columns: draw each column's [min, max] as its own stroke.
          const c = m4Columns(data.time, data.seq, lo, hi, area.x, area.width, filter);
          ctx.beginPath();
          for (let k = 0; k < c.count; k++) {
            const px = (c.px[k] as number) + 0.5;
            ctx.moveTo(px, area.y(c.min[k] as number) + 1);
            ctx.lineTo(px, area.y(c.max[k] as number) - 1);
          }
          ctx.stroke();
        }
      }
    },
  };
}
