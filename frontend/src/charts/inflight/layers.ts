// Bytes in flight (sent, not yet acknowledged) against the receive window the receiver advertises,
// and the bandwidth-delay product. tcptrace -N ("outstanding data") with the window added, as in
// Wireshark's "Window Scaling" graph.

import { strokeLine, strokeSteps } from "../frame/draw";
import type { CanvasLayer } from "../frame/types";
import { m4Columns } from "../lod/m4";
import { visibleRange } from "../lod/visibleRange";
import type { DirectionSeries } from "../series/columns";
import type { Bdp } from "./bdp";

export const INFLIGHT_COLORS = {
  inflight: "var(--chart-data)",
  window: "var(--chart-window)",
  bdp: "var(--chart-bdp)",
} as const;

export function inflightLayer(data: DirectionSeries): CanvasLayer {
  return {
    id: "bytes-in-flight",
    draw(ctx, area) {
      const [from, to] = area.x.domain() as [number, number];
      const { lo, hi } = visibleRange(data.time, from, to);
      const c = m4Columns(data.time, data.bytesInFlight, lo, hi, area.x, area.width);
      ctx.strokeStyle = INFLIGHT_COLORS.inflight;
      ctx.lineWidth = 1.25;
      strokeLine(ctx, c, area.y);
      if (c.count < area.width / 4) {
        ctx.fillStyle = INFLIGHT_COLORS.inflight;
        for (let i = lo; i < hi; i++) {
          const v = data.bytesInFlight[i] as number;
          if (!Number.isFinite(v)) continue;
          ctx.fillRect(area.x(data.time[i] as number) - 1.5, area.y(v) - 1.5, 3, 3);
        }
      }
    },
  };
}

export function advertisedWindowLayer(acks: DirectionSeries): CanvasLayer {
  return {
    id: "advertised-window",
    draw(ctx, area) {
      const [from, to] = area.x.domain() as [number, number];
      const { lo, hi } = visibleRange(acks.time, from, to);
      const c = m4Columns(acks.time, acks.window, lo, hi, area.x, area.width);
      const last = acks.time[acks.length - 1];
      ctx.strokeStyle = INFLIGHT_COLORS.window;
      ctx.lineWidth = 1.75;
      strokeSteps(ctx, c, area.y, last === undefined ? 0 : Math.min(area.width, area.x(last)));
    },
  };
}

export function bdpLayer(bdp: Bdp | null): CanvasLayer {
  return {
    id: "bdp",
    draw(ctx, area) {
      if (!bdp) return;
      ctx.strokeStyle = INFLIGHT_COLORS.bdp;
      ctx.setLineDash([7, 5]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(0, area.y(bdp.bytes));
      ctx.lineTo(area.width, area.y(bdp.bytes));
      ctx.stroke();
    },
  };
}
