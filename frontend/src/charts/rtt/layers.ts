// RTT samples as dots coloured by how they were taken (data → ACK under Karn's rule, timestamp
// echo, handshake), as tcptrace -R plots them with the kinds told apart.

import type { CanvasLayer } from "../frame/types";
import { visibleRange } from "../lod/visibleRange";
import type { DirectionSeries } from "../series/columns";
import { RTT_KIND_STYLES, RTT_KINDS } from "./kinds";

export function rttLayer(acks: DirectionSeries): CanvasLayer {
  return {
    id: "rtt",
    draw(ctx, area) {
      const [from, to] = area.x.domain() as [number, number];
      const { lo, hi } = visibleRange(acks.time, from, to);
      // Dense windows: one dot per pixel column and kind is enough (the eye cannot tell more).
      let lastPx = -2;
      let lastKind = -2;
      for (let i = lo; i < hi; i++) {
        const r = acks.rtt[i] as number;
        if (!Number.isFinite(r)) continue;
        const kind = acks.rttKind[i] as number;
        const px = area.x(acks.time[i] as number);
        const py = area.y(r);
        const handshake = kind >= 2;
        if (
          Math.round(px) === lastPx &&
          kind === lastKind &&
          !handshake &&
          hi - lo > area.width * 4
        )
          continue;
        lastPx = Math.round(px);
        lastKind = kind;
        const name = RTT_KINDS[kind] ?? "data_ack";
        ctx.fillStyle = RTT_KIND_STYLES[name].color;
        if (handshake) ctx.fillRect(px - 4, py - 4, 8, 8);
        else {
          ctx.beginPath();
          ctx.arc(px, py, 2.5, 0, 2 * Math.PI);
          ctx.fill();
        }
      }
    },
  };
}

export const RTT_SUMMARY_COLORS = {
  median: "var(--chart-rtt-data-ack)",
  p95: "var(--chart-rtt-p95)",
} as const;

/** A reference RTT (handshake, median, 95th percentile) as a dashed line across the plot. */
export function referenceLayer(
  id: string,
  rtt: number,
  color: string,
  dash: number[],
): CanvasLayer {
  return {
    id,
    draw(ctx, area) {
      if (!(rtt > 0)) return;
      ctx.strokeStyle = color;
      ctx.setLineDash(dash);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(0, area.y(rtt));
      ctx.lineTo(area.width, area.y(rtt));
      ctx.stroke();
    },
  };
}
