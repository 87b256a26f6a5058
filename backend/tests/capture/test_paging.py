"""``capture.paging``: the table's pages populated chunk by chunk, each page once, on a helper
thread that never outlives the read."""

from __future__ import annotations

import mmap
import threading
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tcplens.capture import read_capture
from tcplens.capture.memory import anonymous_memory
from tcplens.capture.paging import _chunk_ranges
from tcplens.capture.records import DecodeChunk
from tests.capture.shared_captures import LAB, require

PAGE = mmap.PAGESIZE
LAB_PCAP = LAB / "rcvbuf_locked_download.pcap"


def _chunk(first: int, last: int) -> DecodeChunk:
    empty = np.zeros(0, np.int64)
    return DecodeChunk(first, last, empty, empty, empty)


def test_each_page_of_each_column_is_populated_once_by_the_first_chunk_that_writes_it() -> None:
    rows = 10_000
    arena = anonymous_memory(rows * 11 + 3 * 64)
    # columns packed as in columns.allocate_columns (64-byte aligned starts): 8, 1 and 2 bytes a row
    ts = arena[: rows * 8].view(np.int64)
    start = -(-rows * 8 // 64) * 64
    status = arena[start : start + rows]
    start += -(-rows // 64) * 64
    port = arena[start : start + rows * 2].view(np.uint16)
    columns: list[npt.NDArray[Any]] = [ts, status, port]
    chunks = [_chunk(0, 700), _chunk(700, 701), _chunk(701, 5000), _chunk(5000, rows)]
    together = _chunk_ranges(columns, chunks)
    assert len(together) == len(chunks)
    assert sum(map(len, together)) == sum(
        len(r) for c in columns for r in _chunk_ranges([c], chunks)
    )
    for column in columns:
        low = column.ctypes.data // PAGE * PAGE
        high = column.ctypes.data + column.nbytes
        ranges = _chunk_ranges([column], chunks)
        populated: list[set[int]] = []  # per chunk, the column's pages it populates
        for chunk_ranges in ranges:
            pages = [
                page
                for address, nbytes in chunk_ranges
                for page in range(address, address + nbytes, PAGE)
            ]
            assert len(pages) == len(set(pages))
            populated.append(set(pages))
        every = [page for pages in populated for page in pages]
        assert len(every) == len(set(every))  # each page once
        assert sorted(every) == list(range(low, high, PAGE))  # and all of them
        for j, chunk in enumerate(chunks):  # by the time chunk j is decoded, its rows are in
            done = set().union(*populated[: j + 1])
            first_byte = column.ctypes.data + chunk.first * column.itemsize
            last_byte = column.ctypes.data + chunk.last * column.itemsize - 1
            assert set(range(first_byte // PAGE * PAGE, last_byte + 1, PAGE)) <= done


def test_a_read_stopped_by_its_progress_callback_leaves_no_helper_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    require(LAB_PCAP)
    from tcplens.capture import progress, reader

    monkeypatch.setattr(reader, "DECODE_CHUNK", 16)  # ~200 chunks: the helper is mid-way
    monkeypatch.setattr(progress, "MIN_STEP", 1024)

    class Cancelled(Exception):
        pass

    def cancel(done: int, total: int) -> None:
        raise Cancelled

    with pytest.raises(Cancelled):
        read_capture(LAB_PCAP, progress=cancel)
    assert [t for t in threading.enumerate() if t.name == "tcplens-paging"] == []
    full = read_capture(LAB_PCAP)  # and the next read is whole
    assert full.info.packets == read_capture(LAB_PCAP.open("rb")).info.packets


def test_a_helper_that_fails_leaves_the_pages_to_the_decoder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The decoding never waits for a helper that died: its rows are first-touched instead."""
    require(LAB_PCAP)
    from tcplens.capture import paging, reader

    expected = read_capture(LAB_PCAP).packets
    monkeypatch.setattr(reader, "DECODE_CHUNK", 64)
    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))

    def broken(address: int, nbytes: int) -> None:
        raise OSError("no pages today")

    monkeypatch.setattr(paging, "populate_range", broken)
    packets = read_capture(LAB_PCAP).packets
    assert [type(failure) for failure in failures] == [OSError]
    assert len(packets) == len(expected) > 1000
    for name in ("ts_ns", "src_id", "tcp_seq", "tcp_payload_len", "ts_val", "sack_count"):
        assert np.array_equal(getattr(packets, name), getattr(expected, name)), name
