"""``capture.paging``: the table's pages populated chunk by chunk, each page once, on a helper
thread that never outlives the read."""

from __future__ import annotations

import mmap
import os
import sys
import threading
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pytest

from tcplens.capture import memory, read_capture
from tcplens.capture.buffers import CaptureBuffer
from tcplens.capture.columns import allocate_columns
from tcplens.capture.memory import anonymous_memory
from tcplens.capture.paging import _chunk_ranges
from tcplens.capture.records import DecodeChunk
from tcplens.capture.table import DONE_AFTER_FLOWS
from tests.capture.faults import faults_writing
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


@pytest.mark.skipif(sys.platform != "linux", reason="MADV_POPULATE_WRITE is Linux's")
def test_a_decoder_ahead_of_the_helper_populates_its_chunk_itself() -> None:
    """The decoder's cores do not idle while the one helper thread is behind: ``ready`` takes
    the chunk's ranges the helper has not started (the helper then finds none left)."""
    from tcplens.capture.paging import PagingAhead

    rows = 1 << 20
    columns: list[npt.NDArray[Any]] = [
        anonymous_memory(rows * 4).view(np.uint32),
        anonymous_memory(rows),
    ]
    chunks = [_chunk(0, rows // 2), _chunk(rows // 2, rows)]
    go = threading.Event()

    class HeldBuffer:  # the helper waits here, before it populates anything
        def release_before(self, offset: int) -> None:
            go.wait()

    paging = PagingAhead(columns, chunks, cast(CaptureBuffer, HeldBuffer()))
    try:
        (helper,) = [t for t in threading.enumerate() if t.name == "tcplens-paging"]
        assert helper.native_id is not None
        if hasattr(os, "SCHED_IDLE"):  # the helper runs on idle time only (threads)
            assert os.sched_getscheduler(helper.native_id) == os.SCHED_IDLE
        waiting = threading.Thread(target=paging.ready, args=(0,))
        waiting.start()
        waiting.join(timeout=60)
        assert not waiting.is_alive()  # it did not wait for the helper
        first_half = [columns[0][: rows // 2], columns[1][: rows // 2]]
        assert sum(faults_writing(c) for c in first_half) < 16
    finally:
        go.set()
        paging.decoded(0)
        paging.ready(1)
        paging.close()
    assert sum(faults_writing(c) for c in columns) < 32  # the helper did the second chunk


@pytest.mark.skipif(sys.platform != "linux", reason="the reserve's pages move with mremap")
def test_the_pages_that_came_warm_are_not_populated_again() -> None:
    reserve = memory.make_warm_reserve(64 * PAGE)
    assert reserve is not None
    reserve.touch(16 * PAGE)
    rows = 40 * PAGE
    dense = allocate_columns(rows, pcap=True, populate=False).dense
    block = [dense[name] for name in DONE_AFTER_FLOWS if name in dense]  # one mapping
    start = min(column.ctypes.data for column in block)
    end = memory.warm_end(block[0])
    assert end == start + 64 * PAGE  # the block's first 64 pages came from the reserve
    ranges = [r for chunk in _chunk_ranges(block, [_chunk(0, rows)]) for r in chunk]
    populated = {
        page for address, nbytes in ranges for page in range(address, address + nbytes, PAGE)
    }
    expected = {
        page
        for column in block
        for page in range(
            column.ctypes.data // PAGE * PAGE, column.ctypes.data + column.nbytes, PAGE
        )
        if page >= end
    }
    assert populated == expected  # every other page of the block, each once
    plain = anonymous_memory(PAGE)  # memory that took nothing from a reserve
    assert memory.warm_end(plain) == plain.ctypes.data
    assert memory.warm_end(np.zeros(8)) == 0  # not mapped here
