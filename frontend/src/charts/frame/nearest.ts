// Which drawn item is under the pointer: the closest candidate within a few pixels, in screen space
// (a byte and a second are not comparable, pixels are).

export const PICK_RADIUS_PX = 8;

export interface Candidate<T> {
  readonly px: number;
  readonly py: number;
  readonly item: T;
}

export function closest<T>(
  candidates: Iterable<Candidate<T>>,
  px: number,
  py: number,
  radius = PICK_RADIUS_PX,
): T | null {
  let best: T | null = null;
  let bestDistance = radius * radius;
  for (const c of candidates) {
    const dx = c.px - px;
    const dy = c.py - py;
    const d = dx * dx + dy * dy;
    if (d <= bestDistance) {
      bestDistance = d;
      best = c.item;
    }
  }
  return best;
}
