// Numbers as network engineers read them: bytes in binary-free SI (Wireshark shows bytes, tcptrace
// shows bytes; we add k/M/G for readability), rates in bit/s, times in s/ms/µs.

const BYTE_UNITS = ["B", "kB", "MB", "GB", "TB"] as const;

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "–";
  const sign = bytes < 0 ? "−" : "";
  let v = Math.abs(bytes);
  let unit = 0;
  while (v >= 1000 && unit < BYTE_UNITS.length - 1) {
    v /= 1000;
    unit++;
  }
  const digits = unit === 0 || v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${sign}${v.toFixed(digits)} ${BYTE_UNITS[unit]}`;
}

/** Exact byte counts for tooltips: 1 448 → "1,448 B". */
export function formatBytesExact(bytes: number): string {
  return Number.isFinite(bytes) ? `${Math.round(bytes).toLocaleString("en-US")} B` : "–";
}

const RATE_UNITS = ["bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s"] as const;

export function formatRate(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond)) return "–";
  let v = bytesPerSecond * 8;
  let unit = 0;
  while (Math.abs(v) >= 1000 && unit < RATE_UNITS.length - 1) {
    v /= 1000;
    unit++;
  }
  const digits = v >= 100 ? 0 : v >= 10 ? 1 : 2;
  return `${v.toFixed(digits)} ${RATE_UNITS[unit]}`;
}

export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "–";
  const a = Math.abs(seconds);
  if (a >= 1) return `${seconds.toFixed(a >= 100 ? 0 : a >= 10 ? 1 : 3)} s`;
  if (a >= 1e-3) return `${(seconds * 1e3).toFixed(a >= 0.1 ? 0 : 1)} ms`;
  return `${(seconds * 1e6).toFixed(0)} µs`;
}

/** Axis time labels: seconds with only the digits the tick step needs. */
export function formatSecondsTick(seconds: number, step: number): string {
  const digits = Math.max(0, Math.min(6, -Math.floor(Math.log10(step > 0 ? step : 1))));
  return `${seconds.toFixed(digits)}`;
}
