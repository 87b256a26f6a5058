// Number formats the graphs need beyond format/units.ts: exact byte counts for tooltips and axis
// time labels with the digits the tick step needs.

/** Exact byte counts for tooltips: 1448 → "1,448 B". */
export function formatBytesExact(bytes: number): string {
  return Number.isFinite(bytes) ? `${Math.round(bytes).toLocaleString("en-US")} B` : "–";
}

/** Axis time labels: seconds with only the digits the tick step needs. */
export function formatSecondsTick(seconds: number, step: number): string {
  const digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step > 0 ? step : 1))));
  return `${seconds.toFixed(digits)}`;
}

/** A byte rate as network engineers quote it, in bits per second. */
export function formatRate(bytesPerSecond: number): string {
  return formatBitRate(bytesPerSecond * 8);
}

import { formatBitRate } from "../format/units";

/**
 * Formats one axis's tick labels: `(value, step, top)` with the tick step and the largest tick,
 * so every label of the axis has the same unit (picked by the top tick) and the digits the step
 * needs — "0 · 40 · 80 · 120 Mbit/s", not "0 bit/s · 40.0 Mbit/s · 120 Mbit/s". Without a step (a
 * single value, e.g. the crosshair) it falls back to three significant digits.
 */
export type AxisFormat = (value: number, step?: number, top?: number) => string;

function scaledAxis(units: readonly string[], base: number): AxisFormat {
  return (value, step, top = Math.abs(value)) => {
    if (!Number.isFinite(value)) return "–";
    let unit = 0;
    let scale = 1;
    while (Math.abs(top) / scale >= base && unit < units.length - 1) {
      scale *= base;
      unit++;
    }
    const v = value / scale;
    const digits =
      step !== undefined && step > 0
        ? Math.max(0, Math.min(3, -Math.floor(Math.log10(step / scale) + 1e-9)))
        : unit === 0
          ? 0
          : Math.max(0, 2 - Math.floor(Math.log10(Math.max(Math.abs(v), 1))));
    return `${v.toFixed(digits)} ${units[unit]}`;
  };
}

/** Byte axes (sequence numbers, bytes in flight): B, kB, MB, GB (SI, as tcptrace). */
export const bytesAxis: AxisFormat = scaledAxis(["B", "kB", "MB", "GB", "TB"], 1000);

const bitRateAxis = scaledAxis(["bit/s", "kbit/s", "Mbit/s", "Gbit/s"], 1000);

/** Rate axes, from bytes per second, in bits per second. */
export const rateAxis: AxisFormat = (bytesPerSecond, step, top) =>
  bitRateAxis(
    bytesPerSecond * 8,
    step === undefined ? undefined : step * 8,
    top === undefined ? undefined : top * 8,
  );

const millisecondsAxis = scaledAxis(["µs", "ms", "s"], 1000);

/** Duration axes, from seconds: µs, ms or s by the top tick. */
export const durationAxis: AxisFormat = (seconds, step, top) =>
  millisecondsAxis(
    seconds * 1e6,
    step === undefined ? undefined : step * 1e6,
    top === undefined ? undefined : top * 1e6,
  );
