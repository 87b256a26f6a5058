// The bandwidth-delay product: the window a sender needs to keep a path of rate R and round-trip
// time RTT full (RFC 7323 §1.1). Drawn on the bytes-in-flight graph: in flight pinned at the
// receive window *below* this line is the signature of a receiver window too small for the path.

export interface Bdp {
  readonly bytes: number;
  readonly rate: number;
  readonly rtt: number;
}

/**
 * BDP from the best rate the flow reached and the path's round-trip time;
 * null when either is unknown.
 */
export function bandwidthDelayProduct(peakRate: number, rtt: number): Bdp | null {
  if (!(peakRate > 0) || !(rtt > 0) || !Number.isFinite(peakRate) || !Number.isFinite(rtt)) {
    return null;
  }
  return { bytes: peakRate * rtt, rate: peakRate, rtt };
}

/** The highest finite value of `rates` (bytes/s), NaN when none. */
export function peakRate(rates: Float64Array): number {
  let best = Number.NaN;
  for (const r of rates) if (Number.isFinite(r) && !(r <= best)) best = r;
  return best;
}
