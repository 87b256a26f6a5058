"""Receive-window facts over time: zero-window spans and idle gaps."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.tcp.grouping import run_starts
from tcplens.tcp.model import (
    IDLE_GAP_MIN_NS,
    IDLE_GAP_RTTS,
    IdleGaps,
    Segments,
    ZeroWindowSpans,
)

I64 = npt.NDArray[np.int64]


def zero_window_spans(seg: Segments) -> ZeroWindowSpans:
    """Spans in which one direction advertised a zero window (RST and SYN excluded).

    A span starts at the first zero-window packet of a run and ends at the same direction's
    next packet with a non-zero window (the window update that reopens it), or at the run's
    last packet when the flow ended still closed.
    """
    key = seg.flow.astype(np.int64) * 2 + seg.direction
    counted = (seg.flags & 0x06) == 0  # SYN and RST windows say nothing about the buffer
    rows = np.flatnonzero(counted)
    k = key[rows]
    zero = seg.window[rows] == 0
    run_key = k * 2 + zero
    start = run_starts(run_key)
    run_id = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    last = np.r_[first[1:] - 1, rows.shape[0] - 1] if rows.shape[0] else first
    is_zero_run = zero[first]
    nxt = last + 1
    reopened = (nxt < rows.shape[0]) & (k[np.minimum(nxt, max(rows.shape[0] - 1, 0))] == k[last])
    zr = np.flatnonzero(is_zero_run)
    del run_id
    s_row = rows[first[zr]]
    e_row = np.where(reopened[zr], rows[np.minimum(nxt[zr], rows.shape[0] - 1)], rows[last[zr]])
    return ZeroWindowSpans(
        flow=seg.flow[s_row],
        direction=seg.direction[s_row],
        start_ns=seg.time_ns[s_row],
        end_ns=seg.time_ns[e_row],
        start_frame=seg.frame[s_row],
        end_frame=seg.frame[e_row],
        reopened=reopened[zr],
    )


def idle_gaps(seg: Segments, median_rtt_ns: I64, flow_order: I64) -> IdleGaps:
    """Silences inside a flow longer than 200 ms and twice its median RTT.

    ``flow_order`` sorts the segment rows by ``(flow, frame)``; ``median_rtt_ns`` is per flow
    (-1 when unknown).
    """
    f = seg.flow[flow_order]
    t = seg.time_ns[flow_order]
    same = np.zeros(f.shape[0], dtype=bool)
    same[1:] = f[1:] == f[:-1]
    gap = np.zeros(f.shape[0], dtype=np.int64)
    gap[1:] = t[1:] - t[:-1]
    med = np.maximum(median_rtt_ns, 0)
    threshold = np.maximum(IDLE_GAP_MIN_NS, (IDLE_GAP_RTTS * med).astype(np.int64))
    hit = np.flatnonzero(same & (gap > threshold[f]))
    before = flow_order[hit - 1]
    after = flow_order[hit]
    return IdleGaps(
        flow=seg.flow[after],
        start_ns=seg.time_ns[before],
        end_ns=seg.time_ns[after],
        start_frame=seg.frame[before],
        end_frame=seg.frame[after],
    )
