// The one place numbers become words: bytes, rates and durations as network engineers write them
// (SI prefixes, bits per second for rates, as tcptrace and iperf report them).

import { FACTOR_LABELS } from "../api/registry.gen";

const BYTE_UNITS = ["B", "kB", "MB", "GB", "TB"] as const;

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "–";
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < BYTE_UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value.toFixed(0) : value.toPrecision(3)} ${BYTE_UNITS[unit]}`;
}

export function formatBitRate(bitsPerSecond: number): string {
  if (!Number.isFinite(bitsPerSecond)) return "–";
  const units = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s"] as const;
  let value = bitsPerSecond;
  let unit = 0;
  while (Math.abs(value) >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value.toFixed(0) : value.toPrecision(3)} ${units[unit]}`;
}

/** Transfer speed of an upload, in bytes (what a user compares with the file size). */
export function formatByteRate(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "–";
  const abs = Math.abs(seconds);
  if (abs === 0) return "0 s";
  if (abs < 0.001) return `${(seconds * 1e6).toPrecision(3)} µs`;
  if (abs < 1) return `${Number.parseFloat((seconds * 1000).toPrecision(3))} ms`;
  if (abs < 60) return `${Number.parseFloat(seconds.toPrecision(3))} s`;
  const minutes = Math.floor(abs / 60);
  const rest = Math.round(abs - minutes * 60);
  return `${minutes} min ${rest} s`;
}

export function formatMs(ms: number): string {
  return formatDuration(ms / 1000);
}

export function formatPercent(fraction: number): string {
  return `${Math.round(fraction * 100)} %`;
}

/** FACTOR codes (DESIGN.md) as the words the overview uses: the backend's registry, generated. */
export { FACTOR_LABELS };

const LABELS: Readonly<Record<string, string>> = FACTOR_LABELS;

export function factorLabel(factor: string | null | undefined): string {
  if (!factor) return "–";
  return LABELS[factor] ?? factor.replaceAll("_", " ");
}
