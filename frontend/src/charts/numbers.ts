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
