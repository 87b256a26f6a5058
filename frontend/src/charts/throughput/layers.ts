// Throughput and goodput as step lines over bins (tcptrace -T draws a point per averaging window;
// bins aligned on round times read better and stay stable under pan).

import type { CanvasLayer } from "../frame/types";
import type { Bins } from "./bins";

export const THROUGHPUT_COLORS = {
  throughput: "var(--chart-data)",
  goodput: "var(--chart-goodput)",
} as const;

export function rateLayer(id: string, bins: Bins, color: string, fill: boolean): CanvasLayer {
  return {
    id,
    draw(ctx, area) {
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.75;
      ctx.lineJoin = "round";
      ctx.beginPath();
      let open = false;
      for (let b = 0; b < bins.rate.length; b++) {
        const r = bins.rate[b] as number;
        if (!Number.isFinite(r)) {
          open = false;
          continue;
        }
        const x0 = area.x(bins.start[b] as number);
        const x1 = area.x((bins.start[b] as number) + bins.width);
        const y = area.y(r);
        if (open) ctx.lineTo(x0, y);
        else ctx.moveTo(x0, y);
        ctx.lineTo(x1, y);
        open = true;
      }
      ctx.stroke();
      if (fill) {
        ctx.lineTo(area.x((bins.start[bins.rate.length - 1] as number) + bins.width), area.y(0));
        ctx.lineTo(area.x(bins.start[0] as number), area.y(0));
        ctx.closePath();
        ctx.globalAlpha = 0.12;
        ctx.fillStyle = color;
        ctx.fill();
      }
    },
  };
}
