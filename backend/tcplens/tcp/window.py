"""Receive-window facts over time: zero-window spans and idle gaps."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.tcp.model import (
    IDLE_GAP_MIN_NS,
    IDLE_GAP_RTTS,
    IdleGaps,
    Segments,
    ZeroWindowSpans,
)

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]


def zero_window_spans(seg: Segments, spans: I64) -> ZeroWindowSpans:
    """Spans in which one direction advertised a zero window (SYN and RST windows excluded).

    ``spans`` rows are (first zero-window row, end row, reopened) as the per-packet pass
    found them (:mod:`tcplens.tcp.events`): a span ends at the same direction's next packet
    with a non-zero window (the update that reopens it), or at its last packet when the flow
    ended still closed.
    """
    spans = spans[np.argsort(spans[:, 0], kind="stable")] if spans.size else spans.reshape(0, 3)
    s_row, e_row = spans[:, 0], spans[:, 1]
    return ZeroWindowSpans(
        flow=seg.flow_of(s_row),
        direction=seg.direction_of(s_row),
        start_ns=seg.time_ns[s_row],
        end_ns=seg.time_ns[e_row],
        start_frame=seg.frame[s_row],
        end_frame=seg.frame[e_row],
        reopened=spans[:, 2] == 1,
    )


def idle_gaps(seg: Segments, median_rtt_ns: I64, before: I32, after: I32) -> IdleGaps:
    """Silences inside a flow longer than 200 ms and twice its median RTT.

    ``before``/``after`` are the candidates the per-packet pass found: consecutive packets of
    one flow (capture order) more than :data:`IDLE_GAP_MIN_NS` apart, in ``(flow, capture
    order)`` order; ``median_rtt_ns`` is per flow (-1 when unknown).
    """
    flow = seg.flow_of(after)
    threshold = np.maximum(IDLE_GAP_MIN_NS, IDLE_GAP_RTTS * np.maximum(median_rtt_ns[flow], 0))
    keep = seg.time_ns[after] - seg.time_ns[before] > threshold
    before, after = before[keep], after[keep]
    return IdleGaps(
        flow=flow[keep],
        start_ns=seg.time_ns[before],
        end_ns=seg.time_ns[after],
        start_frame=seg.frame[before],
        end_frame=seg.frame[after],
    )
