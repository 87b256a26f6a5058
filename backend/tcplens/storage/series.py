"""Per-flow, per-direction time series as Arrow IPC files, and their level-of-detail reduction.

One file per flow and direction holds the columns the graphs draw (time, relative sequence, ack,
advertised window, bytes in flight, ...) plus ``events``: a bit mask of the Wireshark
``tcp.analysis`` kinds that fired on that segment (names in ``EVENT_KINDS``, DESIGN.md).

A long transfer has millions of segments but a graph is a thousand pixels wide, so a request names
``max_points`` and gets every point when there are few, otherwise a per-bucket min/max reduction
(the M4/min-max idea used by time-series plotting: per time bucket keep the rows holding the
extreme value of each value column, so the envelope of every line is drawn exactly) plus every row
that carries an event mark, because a retransmission hidden by decimation is the evidence the user
came for.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson
import pyarrow as pa

from tcplens.storage.blobs import BlobStore
from tcplens.tcp.model import EVENT_NAMES

# Bit i of the ``events`` column means EVENT_KINDS[i], the TCP analysis's own bit order.
EVENT_KINDS: tuple[str, ...] = EVENT_NAMES
DIRECTIONS: tuple[str, ...] = ("client_to_server", "server_to_client")
TIME_COLUMN = "time_s"
EVENTS_COLUMN = "events"
SACK_BLOCKS = 4  # RFC 2018: at most 4 blocks fit in the 40 bytes of TCP options
# Columns that identify a row rather than being drawn as a line.
# SACK edges ride on duplicate ACKs (event rows, always kept) and the RTT kind labels its sample;
# neither is a line whose envelope the reduction must keep.
_NOT_VALUES = frozenset(
    {TIME_COLUMN, EVENTS_COLUMN, "frame", "sack_count", "rtt_kind"}
    | {f"sack_{edge}_{k}" for edge in ("left", "right") for k in range(SACK_BLOCKS)}
)
# The whole-flow series the graphs ask for first (the SPA's MAX_POINTS): reduced at analysis time
# for every flow direction with more rows, and stored, so the first look at a flow is a file read.
OVERVIEW_POINTS = 16_000

ARROW_STREAM_MEDIA_TYPE = "application/vnd.apache.arrow.stream"


def event_mask(kinds: list[str]) -> int:
    """The ``events`` bit mask for a list of EVENT names (unknown names are ignored)."""
    mask = 0
    for kind in kinds:
        if kind in EVENT_KINDS:
            mask |= 1 << EVENT_KINDS.index(kind)
    return mask


def encode_series(columns: Mapping[str, npt.ArrayLike], *, batch_rows: int = 1 << 20) -> bytes:
    """Serialise series columns to an Arrow IPC *file* (random access, memory-mappable).

    One file holds every flow and direction of a capture, rows grouped per flow and direction
    (the TCP analysis's segment order); a flow's rows are found by their [start, stop) range.
    ``time_s`` is required; ``events`` defaults to no event.
    """
    sink = pa.BufferOutputStream()
    _write_series(sink, columns, batch_rows)
    return bytes(sink.getvalue().to_pybytes())


def write_series_file(
    path: str | os.PathLike[str], columns: Mapping[str, npt.ArrayLike], *, batch_rows: int = 1 << 20
) -> None:
    """``encode_series`` straight into a file: no copy of the whole file in memory (a 1M-packet
    capture's series is ~75 MB, and the copy's fresh pages cost the analysis child time)."""
    with pa.OSFile(os.fspath(path), "wb") as sink:
        _write_series(sink, columns, batch_rows)


def _write_series(
    sink: pa.NativeFile, columns: Mapping[str, npt.ArrayLike], batch_rows: int
) -> None:
    if TIME_COLUMN not in columns:
        raise ValueError(f"a series needs a {TIME_COLUMN!r} column")
    arrays = {name: pa.array(np.asarray(values)) for name, values in columns.items()}
    if EVENTS_COLUMN not in arrays:
        arrays[EVENTS_COLUMN] = pa.array(np.zeros(len(arrays[TIME_COLUMN]), dtype=np.uint32))
    table = pa.table(arrays)
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table, max_chunksize=batch_rows)


def decode_series(data: bytes | pa.Buffer | pa.MemoryMappedFile) -> pa.Table:
    source = pa.py_buffer(data) if isinstance(data, bytes) else data
    return pa.ipc.open_file(source).read_all()


class SeriesFiles:
    """Open series files, kept open for the next request (a small LRU).

    A local file is memory-mapped, so a request touches only the pages of its flow; an object
    from S3 is fetched whole once and then served from memory while it stays in the cache.
    """

    def __init__(self, store: BlobStore, capacity: int = 8) -> None:
        self._store = store
        self._capacity = capacity
        self._tables: OrderedDict[str, pa.Table] = OrderedDict()
        self._lock = threading.Lock()

    def rows(self, key: str, start: int, stop: int) -> pa.Table:
        with self._lock:
            table = self._tables.pop(key, None)
        if table is None:
            path = self._store.local_path(key)
            source = pa.memory_map(str(path)) if path is not None else self._store.get_bytes(key)
            table = decode_series(source)
        with self._lock:
            self._tables[key] = table
            while len(self._tables) > self._capacity:
                self._tables.popitem(last=False)
        return table.slice(start, max(0, stop - start))

    def forget(self, key_prefix: str) -> None:
        with self._lock:
            for key in [k for k in self._tables if k.startswith(key_prefix)]:
                del self._tables[key]


@dataclass(frozen=True)
class SeriesWindow:
    """A reduced view of one series: the rows kept and how many there were in the time range."""

    table: pa.Table
    points_in_range: int
    reduced: bool


def _is_value(name: str, numeric: bool) -> bool:
    """Whether a column is drawn as a line (its envelope kept): numeric, not an identity or label."""
    return numeric and name not in _NOT_VALUES


def kept_rows(
    times: npt.NDArray[np.float64],
    values: Sequence[npt.NDArray[Any]],
    events: npt.NDArray[Any],
    max_points: int,
) -> npt.NDArray[np.int64]:
    """Rows to keep of a series with more than ``max_points`` rows (times non-decreasing).

    Per time bucket, the first row holding each value column's minimum and the last holding its
    maximum; the first and last rows; every row with an event.

    >>> t = np.arange(8.0)
    >>> kept_rows(t, [np.array([5, 1, 7, 3, 2, 9, 0, 4])], np.zeros(8), 4).tolist()
    [0, 1, 2, 5, 6, 7]
    """
    n = len(times)
    # Two rows (min and max) per value column per bucket stay within max_points.
    buckets = max(1, max_points // (2 * max(1, len(values))))
    span = float(times[-1] - times[0])
    if span > 0:
        bucket = np.minimum(((times - times[0]) / span * buckets).astype(np.int64), buckets - 1)
    else:
        bucket = (np.arange(n, dtype=np.int64) * buckets) // n
    # Times are sorted, so each bucket is one run of rows: per-run reductions (reduceat) find
    # the extremes in one pass per column, no sort.
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    sizes = np.diff(np.r_[starts, n])
    run = np.repeat(np.arange(len(starts)), sizes)
    keep = np.zeros(n, dtype=bool)
    keep[0] = keep[-1] = True
    for column in values:
        # An unknown value (NaN) counts as the lowest, so a gap in a line is kept as a gap.
        v = np.where(np.isnan(column), -np.inf, column) if column.dtype.kind == "f" else column
        at_min = np.flatnonzero(v == np.repeat(np.minimum.reduceat(v, starts), sizes))
        keep[at_min[np.r_[True, run[at_min][1:] != run[at_min][:-1]]]] = True
        at_max = np.flatnonzero(v == np.repeat(np.maximum.reduceat(v, starts), sizes))
        keep[at_max[np.r_[run[at_max][1:] != run[at_max][:-1], True]]] = True
    keep |= events != 0
    return np.flatnonzero(keep)


def reduce_series(
    table: pa.Table,
    *,
    start_s: float | None,
    end_s: float | None,
    max_points: int,
) -> SeriesWindow:
    """Rows of ``table`` in [start_s, end_s], reduced to about ``max_points`` plus every event row.

    >>> t = pa.table({"time_s": np.arange(10.0), "seq": np.arange(10)})
    >>> reduce_series(t, start_s=2, end_s=5, max_points=100).table.num_rows
    4
    """
    times = table.column(TIME_COLUMN).to_numpy()
    lo = 0 if start_s is None else int(np.searchsorted(times, start_s, side="left"))
    hi = len(times) if end_s is None else int(np.searchsorted(times, end_s, side="right"))
    window = table.slice(lo, max(0, hi - lo))
    n = window.num_rows
    if n <= max_points:
        return SeriesWindow(window, n, reduced=False)
    names = [
        f.name
        for f in window.schema
        if _is_value(f.name, pa.types.is_integer(f.type) or pa.types.is_floating(f.type))
    ]
    rows = kept_rows(
        times[lo:hi],
        [window.column(name).to_numpy() for name in names],
        window.column(EVENTS_COLUMN).to_numpy(),
        max_points,
    )
    return SeriesWindow(window.take(pa.array(rows)), n, reduced=True)


def overview_rows(
    columns: Mapping[str, npt.NDArray[Any]],
    starts: npt.NDArray[np.int64],
    stops: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], list[list[int] | None]]:
    """The stored overview of every flow direction (row range [start, stop) of ``columns``) longer
    than ``OVERVIEW_POINTS``: the rows ``reduce_series`` keeps of the whole range at that
    resolution, as indices into ``columns``, and each range's [start, stop) in those indices
    (None where the range is short enough to be served whole)."""
    names = [name for name, v in columns.items() if _is_value(name, v.dtype.kind in "iuf")]
    times = columns[TIME_COLUMN]
    events = columns[EVENTS_COLUMN]
    parts: list[npt.NDArray[np.int64]] = []
    spans: list[list[int] | None] = []
    at = 0
    # One pass per long flow direction (a capture has few): the rows inside are vectorised.
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        if stop - start <= OVERVIEW_POINTS:
            spans.append(None)
            continue
        rows = start + kept_rows(
            times[start:stop],
            [columns[name][start:stop] for name in names],
            events[start:stop],
            OVERVIEW_POINTS,
        )
        parts.append(rows)
        spans.append([at, at + len(rows)])
        at += len(rows)
    indices = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return indices, spans


def series_to_arrow_stream(window: SeriesWindow) -> bytes:
    sink = pa.BufferOutputStream()
    table = window.table.replace_schema_metadata(
        {
            "points_in_range": str(window.points_in_range),
            "reduced": "true" if window.reduced else "false",
            "event_kinds": ",".join(EVENT_KINDS),
        }
    )
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def series_to_json(window: SeriesWindow, **fields: Any) -> bytes:
    """The JSON representation: ``fields``, then ``columns`` (column name → values).

    orjson writes numpy columns directly, NaN (an unknown value, e.g. window scale unknown) as
    null since JSON has no NaN: about 1 ms for the graphs' first request where ``json.dumps``
    of Python lists took 20-30 ms.
    """
    columns = {
        name: np.ascontiguousarray(window.table.column(name).to_numpy(zero_copy_only=False))
        for name in window.table.column_names
    }
    return orjson.dumps({**fields, "columns": columns}, option=orjson.OPT_SERIALIZE_NUMPY)
