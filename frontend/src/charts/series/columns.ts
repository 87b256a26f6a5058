// One direction of one flow as the series endpoint returns it, in typed arrays the layers draw from.
//
// The endpoint sends columns (`{"columns": {"time_s": [...], ...}}`); every column the graphs read
// is optional here so a graph degrades (e.g. no SACK layer) instead of failing when the server has
// not got a column. Missing numbers become NaN and are skipped by every layer.

import { type EventBits, eventBitsFrom } from "./events";

export type Direction = "client_to_server" | "server_to_client";

export const SACK_BLOCKS = 4;

export interface DirectionSeries {
  readonly direction: Direction;
  readonly length: number;
  /** Seconds from the capture's first packet, non-decreasing. */
  readonly time: Float64Array;
  /** 1-based frame numbers as Wireshark numbers them (0 when unknown). */
  readonly frame: Float64Array;
  /** Relative, unwrapped sequence number (0 = the direction's ISN). */
  readonly seq: Float64Array;
  readonly payloadLen: Float64Array;
  /** Relative ack, in the other direction's sequence space. */
  readonly ack: Float64Array;
  /** Advertised receive window in bytes, scaled; NaN when unknown. */
  readonly window: Float64Array;
  readonly flags: Uint16Array;
  readonly events: Uint32Array;
  /**
   * 1 where a data segment re-sends sequence space already sent: the retransmissions the graphs
   * mark and count (the backend's tcp/resent.py, the same number as the flow's `retransmissions`).
   * Wireshark's `retransmission` event misses most of them at a sender-side capture, where it calls
   * them `out_of_order`. From the `events` bit when the server sent no `resent` column.
   */
  readonly resent: Uint8Array;
  /** Unacknowledged bytes after this data segment; NaN for non-data or unmeasurable. */
  readonly bytesInFlight: Float64Array;
  /** Cumulative payload bytes sent up to this row, retransmissions included; NaN when not sent. */
  readonly bytesSent: Float64Array;
  readonly sackCount: Uint8Array;
  readonly sackLeft: readonly Float64Array[];
  readonly sackRight: readonly Float64Array[];
  /**
   * RTT sample completed by this row (this row acknowledges or echoes the other direction's data),
   * seconds; NaN where none. `rttKind` is the RTT_KINDS index, -1 where none.
   */
  readonly rtt: Float64Array;
  readonly rttKind: Int8Array;
  readonly eventBits: EventBits;
  /** Rows in the requested range before the level-of-detail reduction. */
  readonly pointsInRange: number;
  readonly reduced: boolean;
}

export interface SeriesResponse {
  readonly columns: Readonly<Record<string, readonly (number | null)[]>>;
  readonly points_in_range?: number;
  readonly reduced?: boolean;
  readonly event_kinds?: readonly string[];
}

function floats(values: readonly (number | null)[] | undefined, n: number, absent = Number.NaN) {
  const out = new Float64Array(n);
  if (!values) {
    out.fill(Number.NaN);
    return out;
  }
  for (let i = 0; i < n; i++) {
    const v = values[i];
    out[i] = v === null || v === undefined || v === absent ? Number.NaN : v;
  }
  return out;
}

function ints<T extends Uint8Array | Uint16Array | Uint32Array>(
  make: (n: number) => T,
  values: readonly (number | null)[] | undefined,
  n: number,
): T {
  const out = make(n);
  if (values) for (let i = 0; i < n; i++) out[i] = values[i] ?? 0;
  return out;
}

/** Typed arrays from the endpoint's JSON columns. `-1` means "none" for in-flight bytes. */
export function seriesFromColumns(direction: Direction, response: SeriesResponse): DirectionSeries {
  const c = response.columns;
  const n = c.time_s?.length ?? 0;
  const sackLeft: Float64Array[] = [];
  const sackRight: Float64Array[] = [];
  const events = ints((k) => new Uint32Array(k), c.events, n);
  const eventBits = eventBitsFrom(response.event_kinds);
  for (let k = 0; k < SACK_BLOCKS; k++) {
    sackLeft.push(floats(c[`sack_left_${k}`] ?? (k === 0 ? c.sack_left : undefined), n));
    sackRight.push(floats(c[`sack_right_${k}`] ?? (k === 0 ? c.sack_right : undefined), n));
  }
  return {
    direction,
    length: n,
    time: floats(c.time_s, n),
    frame: floats(c.frame, n),
    seq: floats(c.seq, n),
    payloadLen: floats(c.payload_len ?? c.len, n),
    ack: floats(c.ack, n),
    window: floats(c.window, n),
    flags: ints((k) => new Uint16Array(k), c.flags, n),
    events,
    resent: c.resent
      ? ints((k) => new Uint8Array(k), c.resent, n)
      : Uint8Array.from(events, (e) => ((e & eventBits.retransmission) !== 0 ? 1 : 0)),
    bytesInFlight: floats(c.bytes_in_flight, n, -1),
    bytesSent: floats(c.bytes_sent, n),
    sackCount: ints((k) => new Uint8Array(k), c.sack_count, n),
    sackLeft,
    sackRight,
    rtt: floats(c.rtt_s, n),
    rttKind: Int8Array.from({ length: n }, (_, i) => c.rtt_kind?.[i] ?? -1),
    eventBits,
    pointsInRange: response.points_in_range ?? n,
    reduced: response.reduced ?? false,
  };
}

/** The empty series: what a graph shows for a direction that sent nothing. */
export function emptySeries(direction: Direction): DirectionSeries {
  return seriesFromColumns(direction, { columns: { time_s: [] } });
}
