"""The round-trip estimate at any time of a transfer, from its RTT samples.

Two parts, each interpolated from its own samples: data->ACK (the capture point to the receiver
and back) and the part through the sender (ACK->data, from the timestamp echoes). The labelling
(``labelling.label_transfer``) asks it at every interval and before every retransmission.
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.diagnosis.search import _ascending, _is_sorted, interp


@numba.njit(cache=True)
def _smoothed(vs):  # type: ignore[no-untyped-def]
    """A part's samples as ``rtt_at`` interpolates them: the 3-sample running minimum (empty
    below three samples)."""
    smooth = np.empty(max(vs.size - 2, 0))
    for i in range(smooth.size):
        a = min(vs[i], vs[i + 1])
        smooth[i] = min(a, vs[i + 2])
    return smooth


@numba.njit(cache=True)
def _rtt_part(ts, vs):  # type: ignore[no-untyped-def]
    """A part's samples as ``rtt_at`` interpolates them: times, values, their 3-sample running
    minimum (``_smoothed``) and whether the interpolation's times ascend (``interp``'s walk).
    Made once per transfer: the labelling asks three times."""
    return ts, vs, _smoothed(vs), _ascending(ts[1:-1])


@numba.njit(cache=True)
def _add_rtt_part(out, query, query_sorted, samples, default):  # type: ignore[no-untyped-def]
    ts, vs, smooth, ascending = samples
    if vs.size >= 3:
        part = interp(query, ts[1:-1], smooth, query_sorted and ascending)
        for i in range(out.size):
            out[i] += part[i]
    elif vs.size:
        low = vs.min()
        for i in range(out.size):
            out[i] += low
    else:
        d = max(default, 0.0)
        for i in range(out.size):
            out[i] += d


@numba.njit(cache=True)
def rtt_at(query, rtt_t, rtt_s, echo_t, echo_s, lag, base_rtt):  # type: ignore[no-untyped-def]
    """Round-trip estimate at each query time: data->ACK part plus the part through the sender.

    Each part is interpolated from its samples; a 3-sample running minimum takes out isolated
    delayed ACKs (a receiver may hold an ACK 40-200 ms), which are not queueing.
    """
    return _rtt_at(query, _is_sorted(query), _rtt_part(rtt_t, rtt_s), _rtt_part(echo_t, echo_s),
                   lag, base_rtt)  # fmt: skip


@numba.njit(cache=True)
def _rtt_at(query, query_sorted, rtt, echo, lag, base_rtt):  # type: ignore[no-untyped-def]
    """``rtt_at`` with the parts' samples already prepared (``_rtt_part``) and the queries'
    order known."""
    out = np.zeros(query.size)
    _add_rtt_part(out, query, query_sorted, rtt, base_rtt - lag)
    _add_rtt_part(out, query, query_sorted, echo, lag)
    return out
