"""Throughput and goodput over time, per flow direction (tcptrace's throughput graph).

Throughput counts every payload byte sent in a time bin, retransmissions included; goodput
counts only bytes that advanced the sequence space (no retransmission, spurious or
out-of-order copy), i.e. what the receiving application could get. Bins are measured from each
flow's first packet so that flows of different start times line up on their own axis. The
result is sparse: bins in which a direction sent no payload are absent, which is what a plot
of a long idle connection wants.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.tcp.model import (
    OUT_OF_ORDER,
    RETRANSMISSION,
    SPURIOUS_RETRANSMISSION,
    Segments,
)

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
F64 = npt.NDArray[np.float64]

_RESENT = RETRANSMISSION | SPURIOUS_RETRANSMISSION | OUT_OF_ORDER


@dataclass(frozen=True)
class RateSeries:
    """One row per (flow, direction, time bin) with payload, sorted in that order."""

    flow: I32
    direction: U8
    start_ns: I64  # bin start (absolute, like Segments.time_ns)
    bin_ns: int
    throughput_bps: F64  # bits per second of all payload sent in the bin
    goodput_bps: F64  # bits per second of payload that advanced the sequence space

    def __len__(self) -> int:
        return int(self.flow.shape[0])


def rate_series(seg: Segments, flow_start_ns: I64, bin_ns: int) -> RateSeries:
    """Binned throughput and goodput of every flow direction at once.

    A direction that sent 1000 bytes in each of two 100 ms bins, the second one a
    retransmission, has 80 kbit/s throughput in both bins and goodput only in the first
    (``backend/tests/tcp/test_rate_and_vantage.py``).
    """
    if bin_ns <= 0:
        raise ValueError("bin_ns must be positive")
    data = np.flatnonzero(seg.payload_len > 0)
    key = np.searchsorted(seg.offsets, data, side="right") - 1  # 2 * flow + direction
    bins = (seg.time_ns[data] - flow_start_ns[key >> 1]) // bin_ns
    n_bins = int(bins.max()) + 1 if bins.size else 1
    code = key * n_bins + bins
    # rows are sorted by key and time, so codes are already ascending: runs are the bins
    start = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if code.size else code
    payload = seg.payload_len[data].astype(np.int64)  # a bin can exceed 2**31 bytes
    good = np.where((seg.events[data] & _RESENT) != 0, 0, payload)
    total = np.add.reduceat(payload, start) if start.size else payload[:0]
    goodput = np.add.reduceat(good, start) if start.size else good[:0]
    flow = (key[start] >> 1).astype(np.int32)
    scale = 8e9 / bin_ns
    return RateSeries(
        flow=flow,
        direction=(key[start] & 1).astype(np.uint8),
        start_ns=flow_start_ns[flow] + bins[start] * bin_ns,
        bin_ns=bin_ns,
        throughput_bps=(total * scale).astype(np.float64),
        goodput_bps=(goodput * scale).astype(np.float64),
    )
