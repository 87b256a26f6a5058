"""Nagle's algorithm waiting for a delayed ACK (RFC 896, RFC 1122 §4.2.3.4), per interval.

The labelling (``labelling.label_transfer``) asks it of every interval between two data segments
(step 2 of timeline.py's order); ``nagle_stalls`` asks it alone, for the tests and tools. The
thresholds are in ``thresholds.py``.
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.diagnosis.search import search_ascending
from tcplens.diagnosis.thresholds import BIG, DELAYED_ACK_MIN_S


@numba.njit(cache=True, inline="always")
def _nagle_at(  # type: ignore[no-untyped-def]
    i, t, seq, seq_end, retrans, ack_t, ack_cum, edge_cum, ack_payload, lag, mss, high_i, q_i,
    far_side, tolerance,
):  # fmt: skip
    """``nagle_stalls``' answer for interval i: (stall, delay beyond the round trip). Its ACK is
    ``q_i``, the first ACK covering ``high_i``, the highest byte sent up to segment i; needs at
    least one ACK. (No branch inside: an inlined function's arrays are reference-counted
    unless its body is one block.)"""
    m = ack_t.size
    j = min(q_i, m - 1)
    delay = (ack_t[j] - t[i]) - far_side
    follow = t[i + 1] - (ack_t[j] + lag)
    edge_before = edge_cum[j - 1] if j > 0 else BIG
    s = (
        ((seq_end[i] - seq[i]) < mss)
        & (ack_cum[j] >= high_i)
        & (ack_payload[j] <= 0)
        & (delay >= DELAYED_ACK_MIN_S)
        & (follow >= -tolerance)
        & (follow <= tolerance)
        & (not retrans[i + 1])
        & (seq_end[i + 1] <= edge_before)
    )
    return s, (delay if s else 0.0)


@numba.njit(cache=True, inline="always")
def _may_be_nagle(i, t, ack_t, lag, q_i, tolerance):  # type: ignore[no-untyped-def]
    """Whether segment i+1 followed the ACK of interval i at once (``_nagle_at``'s test that
    fails for nearly every interval of a bulk transfer, where the next segment leaves long
    before that ACK): the others need only be made where it holds."""
    follow = t[i + 1] - (ack_t[min(q_i, ack_t.size - 1)] + lag)
    return (follow >= -tolerance) & (follow <= tolerance)


@numba.njit(cache=True)
def nagle_stalls(  # type: ignore[no-untyped-def]
    t, seq, seq_end, retrans, ack_t, ack_cum, edge_cum, ack_payload, lag, mss, base_rtt
):
    """Intervals where Nagle's algorithm (RFC 896, RFC 1122 §4.2.3.4) waited for a delayed ACK,
    and the delay beyond the round trip.

    Interval i qualifies when segment i was smaller than a full segment, its ACK (a pure ACK: a
    response would make it a request/response turn) arrived at least ``DELAYED_ACK_MIN_S`` later
    than the round trip explains, and segment i+1 followed that ACK at once — and fitted in the
    window offered before that ACK: an ACK that opened the window (a slow reader's window update)
    means the window held it, not Nagle. ``ack_cum`` and ``edge_cum`` are the running maxima of
    the ACKs and of their right edges.
    """
    n = t.size
    k = max(n - 1, 0)
    stall = np.zeros(k, np.bool_)
    delay_out = np.zeros(k)
    m = ack_t.size
    if n < 2 or m == 0:
        return stall, delay_out
    high = np.empty(k, np.int64)
    run = seq_end[0]
    for i in range(k):
        run = max(run, seq_end[i])
        high[i] = run
    q = search_ascending(ack_cum, True, high, False)  # (both running maxima)
    far_side = max(base_rtt - lag, 0.0)  # capture point -> receiver -> capture point
    tolerance = max(0.002, 0.1 * base_rtt)
    for i in range(k):
        if _may_be_nagle(i, t, ack_t, lag, q[i], tolerance):
            stall[i], delay_out[i] = _nagle_at(
            i, t, seq, seq_end, retrans, ack_t, ack_cum, edge_cum, ack_payload, lag, mss,
            high[i], q[i], far_side, tolerance,
        )  # fmt: skip
    return stall, delay_out
