"""Measurements over the labelled intervals of one transfer that several rules quote."""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis.timeline import Intervals
from tcplens.diagnosis.transfer import I64, Transfer


def of_transfer(tr: Transfer, spans: Intervals) -> Intervals:
    """The intervals that belong to this transfer (they start at one of its data frames)."""
    idx = np.searchsorted(tr.frame, spans.frame0)
    hit = (idx < tr.frame.size) & (tr.frame[np.minimum(idx, tr.frame.size - 1)] == spans.frame0)
    return spans.take(hit & (spans.flow == tr.flow))


def delivered_bytes(tr: Transfer, spans: Intervals) -> int:
    """Payload of the segments that ended these intervals (what was sent during them)."""
    idx = np.searchsorted(tr.frame, spans.frame1)
    idx = idx[(idx < tr.frame.size)]
    return int((tr.seq_end[idx] - tr.seq[idx]).sum())


def scale_note(tr: Transfer) -> str:
    """What the finding must say about the receiver's window scale when the handshake, which
    carries it (RFC 7323 §2.2), was not captured; empty when it was."""
    receiver = tr.receiver.rsplit(":", 1)[0]
    if tr.window_scale_inferred:
        return (
            f" The handshake was not captured, so {receiver}'s window scale (shift "
            f"{tr.window_scale}, × {1 << tr.window_scale}) was inferred from the data: the "
            "shift under which the sender's segments ended exactly at the right edge of the "
            "advertised window (ack + window), where a sender the window holds stops, and "
            "never beyond it."
        )
    if tr.window_scale < 0:
        return (
            f" The handshake was not captured and {receiver}'s window scale could not be "
            "inferred (no segment ended at the right edge of the window it advertised, as a "
            "sender the window holds does), so the capture cannot tell its window in bytes."
        )
    return ""


def windows_during(tr: Transfer, spans: Intervals) -> I64:
    """Windows the receiver advertised that the sender acted on during these intervals (known
    ones only: -1, a window whose scale is unknown, is never read as a size)."""
    if tr.ack_t.size == 0 or spans.t0.size == 0:
        return np.zeros(0, np.int64)
    lo = np.searchsorted(tr.ack_t, spans.t0 - tr.lag_s, side="right") - 1
    hi = np.searchsorted(tr.ack_t, spans.t1 - tr.lag_s, side="right") - 1
    idx = np.unique(np.concatenate((np.maximum(lo, 0), np.maximum(hi, 0))))
    w: I64 = tr.window[idx]
    return w[w >= 0]


def flight_during(tr: Transfer, spans: Intervals) -> I64:
    """Bytes in flight as the sender saw them after each segment that started an interval."""
    if spans.t0.size == 0:
        return np.zeros(0, np.int64)
    i = np.searchsorted(tr.frame, spans.frame0)
    i = np.minimum(i, tr.frame.size - 1)
    high = np.maximum.accumulate(tr.seq_end)[i]
    a = np.searchsorted(tr.ack_t, tr.t[i] - tr.lag_s, side="right") - 1
    if tr.ack.size == 0:
        return high
    ack = np.where(a >= 0, np.maximum.accumulate(tr.ack)[np.maximum(a, 0)], 0)
    flight: I64 = np.maximum(high - ack, 0)
    return flight
