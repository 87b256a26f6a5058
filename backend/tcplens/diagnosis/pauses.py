"""What ended a pause in sending: the peer's answer, an ACK, or Nagle's algorithm waiting for
one. The period labelling (``timeline.py``) asks these questions of every pause at once."""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis.transfer import F64, I64, B, Transfer

# Linux delays an ACK at least 40 ms (TCP_DELACK_MIN), Windows 200 ms, macOS 100 ms: a stall of
# 25 ms beyond the round trip is a delayed ACK and not jitter.
DELAYED_ACK_MIN_S = 0.025

# An application-level acknowledgement ("ACK!", a 4-byte sequence number) is this small; the
# smallest HTTP/1.1 response ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") is 38 bytes.
APP_ACK_MAX_BYTES = 32


def think_after(rtt_s: float) -> float:
    """A sender answering later than this after the request arrived was busy (thinking)."""
    return max(0.02, 0.5 * rtt_s)


def pause_causes(tr: Transfer, t0: F64, t1: F64, base_rtt: float) -> tuple[I64, F64, B]:
    """For each pause ``[t0, t1)``: what the peer sent during it, how long the sender took to
    resume after the peer's last message, and whether the resume followed an ACK at once.

    A message that carries content (more than an application-level acknowledgement of
    ``APP_ACK_MAX_BYTES``) answered within ``think_after(rtt)`` is a request/response exchange,
    one round trip (``latency``: a pooled HTTP connection asking for one object after another);
    a tiny answer that only says "go on" is a stop-and-wait protocol, and a long wait after the
    request is the sender's application thinking (both ``application``).
    """
    n = t0.size
    answer = np.zeros(n, np.int64)
    think = np.full(n, np.inf)
    woke = np.zeros(n, np.bool_)
    if tr.ack_t.size == 0 or n == 0:
        return answer, think, woke
    view_end = t1 - 0.8 * tr.lag_s
    lo = np.searchsorted(tr.ack_t, t0 - tr.lag_s, side="right")
    hi = np.searchsorted(tr.ack_t, view_end, side="right")
    csum = np.concatenate(([0], np.cumsum(tr.ack_payload)))
    answer = (csum[hi] - csum[lo]).astype(np.int64)
    tolerance = max(0.001, 0.1 * base_rtt) + 0.2 * tr.lag_s
    last = hi - 1
    heard_any = np.where(last >= 0, tr.ack_t[np.maximum(last, 0)], -np.inf) + tr.lag_s
    woke = (last >= lo) & (np.abs(t1 - heard_any) <= tolerance)
    data_t = tr.ack_t[tr.ack_payload > 0]
    if data_t.size:
        k = np.searchsorted(data_t, view_end, side="right") - 1
        heard = np.where(k >= 0, data_t[np.maximum(k, 0)], -np.inf) + tr.lag_s
        think = t1 - heard
    return answer, think, woke


def nagle_stalls(tr: Transfer, base_rtt: float) -> tuple[B, F64]:
    """Intervals where Nagle's algorithm waited for a delayed ACK, and the delay beyond the RTT.

    Interval i qualifies when segment i was smaller than a full segment, its ACK (a pure ACK: a
    response would make it a request/response turn) arrived at least ``DELAYED_ACK_MIN_S`` later
    than the round trip explains, and segment i+1 followed that ACK at once.
    """
    n = tr.t.size
    none = np.zeros(max(n - 1, 0), np.bool_), np.zeros(max(n - 1, 0), np.float64)
    if n < 2 or tr.ack.size == 0:
        return none
    small = (tr.seq_end - tr.seq)[:-1] < tr.mss
    high = np.maximum.accumulate(tr.seq_end)[:-1]
    ack_cum = np.maximum.accumulate(tr.ack)
    k = np.minimum(np.searchsorted(ack_cum, high, side="left"), ack_cum.size - 1)
    acked = ack_cum[k] >= high
    ack_seen = tr.ack_t[k] + tr.lag_s  # when the sender received it
    far_side = max(base_rtt - tr.lag_s, 0.0)  # capture point -> receiver -> capture point
    delay = (tr.ack_t[k] - tr.t[:-1]) - far_side
    follow = tr.t[1:] - ack_seen
    # The next segment must have fitted in the window offered before that ACK: if the ACK
    # opened the window (a window update from a slow reader), the window held it, not Nagle.
    known = tr.window >= 0
    edge = np.where(known, tr.ack + np.maximum(tr.window, 0), np.iinfo(np.int64).max // 4)
    edge_cum = np.maximum.accumulate(edge)
    edge_before = np.where(k > 0, edge_cum[np.maximum(k - 1, 0)], np.iinfo(np.int64).max // 4)
    fitted = tr.seq_end[1:] <= edge_before
    tolerance = max(0.002, 0.1 * base_rtt)
    stall = (
        small
        & acked
        & ~tr.ack_has_data[k]
        & (delay >= DELAYED_ACK_MIN_S)
        & (follow >= -tolerance)
        & (follow <= tolerance)
        & ~tr.retransmission[1:]
        & fitted
    )
    return stall, np.where(stall, delay, 0.0)
