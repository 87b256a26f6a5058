"""Level of detail of a flow's series: every point when few, min/max per bucket plus every event."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplens.storage.series import (
    EVENT_KINDS,
    OVERVIEW_POINTS,
    decode_series,
    encode_series,
    event_mask,
    kept_rows,
    overview_rows,
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


def _reference_rows(
    times: np.ndarray, values: list[np.ndarray], events: np.ndarray, max_points: int
) -> np.ndarray:
    """The reduction as first written: a lexsort per column by (bucket, value); the stable sort
    puts the first row of a bucket's minimum first and the last of its maximum last."""
    n = len(times)
    buckets = max(1, max_points // (2 * max(1, len(values))))
    span = float(times[-1] - times[0])
    if span > 0:
        bucket = np.minimum(((times - times[0]) / span * buckets).astype(np.int64), buckets - 1)
    else:
        bucket = (np.arange(n, dtype=np.int64) * buckets) // n
    keep = np.zeros(n, dtype=bool)
    keep[0] = keep[-1] = True
    for column in values:
        finite = np.where(np.isnan(column), -np.inf, column) if column.dtype.kind == "f" else column
        order = np.lexsort((finite, bucket))
        ordered = bucket[order]
        firsts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        keep[order[firsts]] = True
        keep[order[np.r_[firsts[1:] - 1, n - 1]]] = True
    keep |= events != 0
    return np.flatnonzero(keep)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(2, 3000),
    max_points=st.integers(2, 400),
    seed=st.integers(0, 2**32 - 1),
    clock=st.sampled_from(["spread", "clustered", "constant"]),
)
def test_kept_rows_are_the_sorted_reductions_rows(
    n: int, max_points: int, seed: int, clock: str
) -> None:
    rng = np.random.default_rng(seed)
    times = {
        "spread": np.sort(rng.random(n) * 10),
        "clustered": np.sort(np.round(rng.random(n) * 3)),  # many rows share a time
        "constant": np.zeros(n),
    }[clock]
    values = [
        rng.integers(0, 5, n),  # many ties
        np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 4, n).astype(float)),
        rng.integers(0, 3, n).astype(np.uint8),
    ]
    events = (rng.random(n) < 0.01).astype(np.uint32)
    assert np.array_equal(
        kept_rows(times, values, events, max_points),
        _reference_rows(times, values, events, max_points),
    )


def test_overview_rows_are_the_whole_flow_reduction_of_each_long_direction() -> None:
    long_n, short_n = OVERVIEW_POINTS * 3, 500
    table = _series(long_n)
    columns = {name: table.column(name).to_numpy() for name in table.column_names}
    # Two flow directions: a long one, then a short one (its rows appended after).
    short = _series(short_n)
    columns = {
        name: np.concatenate([values, short.column(name).to_numpy()])
        for name, values in columns.items()
    }
    starts = np.array([0, long_n], dtype=np.int64)
    stops = np.array([long_n, long_n + short_n], dtype=np.int64)
    rows, spans = overview_rows(columns, starts, stops)
    assert spans[1] is None  # short enough to be served whole
    assert spans[0] == [0, len(rows)]
    expected = reduce_series(table, start_s=None, end_s=None, max_points=OVERVIEW_POINTS)
    assert expected.reduced
    assert columns["seq"][rows].tolist() == expected.table.column("seq").to_pylist()
    assert columns["time_s"][rows].tolist() == expected.table.column("time_s").to_pylist()
