"""Receive-window facts over time: zero-window spans and idle gaps."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import ACK
from tcplens.tcp.model import (
    IDLE_GAP_MIN_NS,
    IDLE_GAP_RTTS,
    UNKNOWN,
    ZERO_WINDOW_PROBE,
    Flows,
    IdleGaps,
    Segments,
    ZeroWindowSpans,
)

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

HEADROOM_LIMIT = 2**31 - 1  # the result is int32


def zero_window_spans(seg: Segments, spans: I32) -> ZeroWindowSpans:
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


def idle_gaps(
    seg: Segments, median_rtt_ns: I64, before: I32, after: I32, clock_steps: I64
) -> IdleGaps:
    """Silences inside a flow longer than 200 ms and twice its median RTT.

    ``before``/``after`` are the candidates the per-packet pass found: consecutive packets of
    one flow (capture order) more than :data:`IDLE_GAP_MIN_NS` apart, in ``(flow, capture
    order)`` order; ``median_rtt_ns`` is per flow (-1 when unknown). A silence across one of
    the capture's clock steps (``clock_steps``: their frames, ascending; ``capture.clock``) is
    none: the time across a step is unknown.
    """
    flow = seg.flow_of(after)
    threshold = np.maximum(IDLE_GAP_MIN_NS, IDLE_GAP_RTTS * np.maximum(median_rtt_ns[flow], 0))
    keep = seg.time_ns[after] - seg.time_ns[before] > threshold
    if clock_steps.shape[0]:
        step_after = np.searchsorted(clock_steps, seg.frame[before], side="right")
        keep &= step_after == np.searchsorted(clock_steps, seg.frame[after], side="right")
    before, after = before[keep], after[keep]
    return IdleGaps(
        flow=flow[keep],
        start_ns=seg.time_ns[before],
        end_ns=seg.time_ns[after],
        start_frame=seg.frame[before],
        end_frame=seg.frame[after],
    )


def window_headroom(seg: Segments, flows: Flows) -> I32:
    """Per segment: the receiver's last advertised right edge (ack + scaled window) minus the
    segment's end, i.e. how much more the sender could have sent (tcptrace's outstanding-data
    graph, Wireshark's window_full test when it is 0).

    UNKNOWN for segments without payload, with SYN/FIN/RST, zero-window probes, while the
    receiver's latest packet carried no ACK, and when the receiver's window scale is unknown
    (handshake not captured); clipped to ±(2**31 - 1) (a window is < 2**30, RFC 7323 §2.3:
    only a sender far beyond the receiver's ACK, e.g. after a capture gap, is further away).
    The receiver's latest packet is its last one before the segment in capture order; its
    ``window`` is already scaled, and unscaled on a SYN (RFC 7323 §2.2), which is the rule
    the per-packet pass applies for ``window_full`` (:mod:`tcplens.tcp.events`). Computed on
    demand: 4 bytes per packet that the analysis itself never needs.
    """
    n = len(seg)
    out: I32 = np.full(n, UNKNOWN, np.int32)
    data = np.flatnonzero(
        (seg.payload_len > 0) & ((seg.flags & 0x07) == 0) & ((seg.events & ZERO_WINDOW_PROBE) == 0)
    )
    if data.size == 0:
        return out
    # (slice, frame) keys ascend over the rows (Segments are sorted by flow, direction, frame),
    # so the receiver's last row before a segment is one binary search away
    n_slices = seg.offsets.shape[0] - 1
    slice_of = np.repeat(np.arange(n_slices, dtype=np.uint64), np.diff(seg.offsets))
    key = (slice_of << np.uint64(32)) | seg.frame.astype(np.uint64)
    peer = slice_of[data] ^ np.uint64(1)
    row = np.searchsorted(key, (peer << np.uint64(32)) | seg.frame[data].astype(np.uint64)) - 1
    peer_i = peer.astype(np.int64)
    scale = np.where(
        (peer_i & 1) == 0,
        flows.window_scale_client[peer_i >> 1],
        flows.window_scale_server[peer_i >> 1],
    )
    ok = (row >= seg.offsets[peer_i]) & (scale >= 0)
    data, row = data[ok], row[ok]
    ok = (seg.flags[row] & ACK) != 0
    data, row = data[ok], row[ok]
    end = seg.unwrapped_seq()[data] + seg.payload_len[data]
    room = seg.unwrapped_ack()[row] + seg.window[row] - end
    out[data] = np.clip(room, -HEADROOM_LIMIT, HEADROOM_LIMIT)
    return out
