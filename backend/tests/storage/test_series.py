"""Level of detail of a flow's series: every point when few, min/max per bucket plus every event."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tcplens.storage.series import (
    EVENT_KINDS,
    decode_series,
    encode_series,
    event_mask,
    reduce_series,
)
from tcplens.tcp.model import EVENT_NAMES, RETRANSMISSION, ZERO_WINDOW


def _series(n: int) -> pa.Table:
    t = np.linspace(0.0, 10.0, n)
    seq = np.arange(n, dtype=np.int64) * 1448
    window = np.full(n, 65535, dtype=np.int64)
    window[n // 2] = 0  # one dip the reduction must keep
    events = np.zeros(n, dtype=np.uint32)
    events[[7, n // 3, n - 3]] = [RETRANSMISSION, RETRANSMISSION, ZERO_WINDOW]
    return decode_series(
        encode_series({"time_s": t, "seq": seq, "window": window, "events": events})
    )


def test_the_event_bit_order_is_the_tcp_analysis_order() -> None:
    assert EVENT_KINDS == EVENT_NAMES
    assert event_mask(["retransmission", "zero_window"]) == RETRANSMISSION | ZERO_WINDOW


def test_few_points_come_back_unreduced() -> None:
    table = _series(100)
    window = reduce_series(table, start_s=None, end_s=None, max_points=1000)
    assert not window.reduced
    assert window.table.num_rows == 100


def test_time_range_selects_rows_inclusively() -> None:
    table = decode_series(encode_series({"time_s": np.arange(10.0), "seq": np.arange(10)}))
    window = reduce_series(table, start_s=2.0, end_s=5.0, max_points=100)
    assert window.table.column("time_s").to_pylist() == [2.0, 3.0, 4.0, 5.0]


def test_reduction_keeps_every_event_and_each_extreme() -> None:
    table = _series(200_000)
    window = reduce_series(table, start_s=None, end_s=None, max_points=1000)
    assert window.reduced
    assert window.points_in_range == 200_000
    events = window.table.column("events").to_numpy()
    assert np.count_nonzero(events) == 3
    seq = window.table.column("seq").to_numpy()
    # the first and last sequence numbers (global min/max) survive, and so does the zero window
    assert seq.min() == 0 and seq.max() == 199_999 * 1448
    assert 0 in window.table.column("window").to_pylist()
    # two value columns × 2 rows per bucket within max_points, plus the event rows
    assert window.table.num_rows <= 1000 + 3
    times = window.table.column("time_s").to_numpy()
    assert np.all(np.diff(times) >= 0)
