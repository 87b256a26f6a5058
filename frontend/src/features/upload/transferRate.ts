// Upload speed from XHR progress events: bytes over the last couple of seconds, so the figure
// follows the link's current rate rather than the average since the start.

export interface ProgressSample {
  atMs: number;
  loaded: number;
}

const WINDOW_MS = 2000;

/** Keep the samples of the last WINDOW_MS (and the one just before, as the baseline). */
export function addSample(
  samples: readonly ProgressSample[],
  next: ProgressSample,
): ProgressSample[] {
  const kept = [...samples, next];
  let first = 0;
  while (first < kept.length - 2 && (kept[first + 1]?.atMs ?? 0) <= next.atMs - WINDOW_MS) first++;
  return kept.slice(first);
}

/** Bytes per second between the oldest and newest sample; null until there are two samples. */
export function bytesPerSecond(samples: readonly ProgressSample[]): number | null {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (!first || !last || last.atMs <= first.atMs) return null;
  return ((last.loaded - first.loaded) * 1000) / (last.atMs - first.atMs);
}

/** Seconds left at the current rate; null when unknown. */
export function secondsLeft(loaded: number, total: number, rate: number | null): number | null {
  if (!rate || rate <= 0 || total <= loaded) return null;
  return (total - loaded) / rate;
}
