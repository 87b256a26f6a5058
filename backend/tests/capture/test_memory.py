"""Fresh memory for the per-packet arrays: zero-filled, and populated when asked.

Page residency is read from the minor page faults the process takes when it then writes every
page (``getrusage``): populated memory takes none, memory faulted by first touch one per page.
"""

from __future__ import annotations

import itertools
import mmap
import sys
import threading

import numpy as np
import pytest

from tcplens.capture import memory
from tcplens.capture.memory import anonymous_memory
from tcplens.tcp.compiled import empty
from tests.capture.faults import faults_writing

MIB = 1 << 20
linux_only = pytest.mark.skipif(sys.platform != "linux", reason="MADV_POPULATE_WRITE is Linux's")


def test_memory_is_zero_filled_and_sized() -> None:
    for populate in (False, True):
        array = anonymous_memory(3 * MIB + 5, populate=populate)
        assert array.shape == (3 * MIB + 5,)
        assert array.dtype == np.uint8
        assert not array.any()
    assert anonymous_memory(0, populate=True).shape == (0,)


@linux_only
def test_populated_memory_takes_no_page_faults_when_written() -> None:
    pages = 64 * MIB // mmap.PAGESIZE  # above the size populated on all cores
    lazy = anonymous_memory(64 * MIB)
    assert faults_writing(lazy) >= pages // 2  # first touches fault (fault-around may batch)
    populated = anonymous_memory(64 * MIB + 5, populate=True)
    assert faults_writing(populated) < pages // 100
    small = anonymous_memory(MIB, populate=True)  # populated in one call
    assert faults_writing(small) < 16


def test_mapped_regions_are_the_live_mappings() -> None:
    array = anonymous_memory(2 * MIB + 3, populate=True)
    columns = array[MIB : 2 * MIB].view(np.uint16)  # a view keeps the mapping alive
    region = (array.ctypes.data, 2 * MIB + 3)
    assert region in memory.mapped_regions()
    del array
    assert region in memory.mapped_regions()
    del columns
    assert region not in memory.mapped_regions()
    assert (0, 0) not in memory.mapped_regions()
    assert anonymous_memory(0).shape == (0,)  # nothing mapped, nothing listed


def test_empty_views_one_specialisation_as_every_dtype() -> None:
    for dtype in (np.uint8, np.uint16, np.int32, np.uint32, np.int64, np.bool_):
        array = empty(1001, dtype)
        assert array.shape == (1001,) and array.dtype == dtype
        assert array.ctypes.data % 8 == 0
    assert empty(0, np.int64).shape == (0,)


def test_without_madv_populate_write_pages_are_touched_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memory, "_can_populate", False)  # a kernel older than 5.14
    array = anonymous_memory(48 * MIB, populate=True)
    assert not array.any()
    if sys.platform == "linux":
        assert faults_writing(array) < 48 * MIB // mmap.PAGESIZE // 100


@pytest.mark.parametrize("cores", [2, 3, 4])
def test_parts_are_populated_at_once_by_threads_started_before_any_populates(
    monkeypatch: pytest.MonkeyPatch, cores: int
) -> None:
    """By construction, not by timing: a thread started while another part is inside its
    populate would wait for it (the stack's mmap needs the mmap_lock the populate holds), so
    every start must come before the first populate, and all parts must be inside at once."""
    events: list[tuple[str, int, int]] = []
    together = threading.Barrier(cores, timeout=10)  # broken unless all parts populate at once

    def populate(address: int, nbytes: int) -> None:
        events.append(("populate", address, nbytes))
        together.wait()

    class Thread(threading.Thread):
        def start(self) -> None:
            events.append(("start", 0, 0))
            super().start()

    monkeypatch.setattr(memory, "_populate", populate)
    monkeypatch.setattr(threading, "Thread", Thread)
    address, nbytes = 1 << 40, 64 * MIB + 5 * mmap.PAGESIZE + 7
    memory._populate_parallel(address, nbytes, cores)

    kinds = [kind for kind, _, _ in events]
    assert kinds == ["start"] * (cores - 1) + ["populate"] * cores
    assert not together.broken
    parts = sorted((start, size) for kind, start, size in events if kind == "populate")
    assert parts[0][0] == address and sum(size for _, size in parts) == nbytes
    for (start, size), (following, _) in itertools.pairwise(parts):
        assert start + size == following and size % mmap.PAGESIZE == 0
    assert min(size for _, size in parts) >= nbytes // cores - mmap.PAGESIZE  # none empty


def test_a_small_range_is_populated_in_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(
        memory, "_populate", lambda address, nbytes: calls.append((address, nbytes))
    )
    memory._populate_parallel(4096, memory._PARALLEL_MIN - 1, 4)
    assert calls == [(4096, memory._PARALLEL_MIN - 1)]


def test_parts_whose_thread_cannot_start_are_populated_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A process at its thread limit: the started threads are still released (no hang) and
    the parts left over are populated by the caller."""
    calls: list[tuple[int, int]] = []
    lock = threading.Lock()

    def populate(address: int, nbytes: int) -> None:
        with lock:
            calls.append((address, nbytes))

    class Thread(threading.Thread):
        starts = 0

        def start(self) -> None:
            Thread.starts += 1
            if Thread.starts > 1:
                raise RuntimeError("can't start new thread")
            super().start()

    monkeypatch.setattr(memory, "_populate", populate)
    monkeypatch.setattr(threading, "Thread", Thread)
    address, nbytes = 1 << 40, 64 * MIB
    memory._populate_parallel(address, nbytes, 4)
    assert sorted(calls) == memory._parts(address, nbytes, 4)


def _inside(array: np.ndarray, region: tuple[int, int]) -> bool:
    start = array.ctypes.data
    return region[0] <= start and start + array.nbytes <= region[0] + region[1]


def test_a_mapping_is_recycled_only_once_its_last_view_died() -> None:
    with memory.recycling():
        block = anonymous_memory(2 * MIB, populate=True)
        region = (block.ctypes.data, 2 * MIB)
        column = block[64 : 64 + 4000].view(np.uint32)
        column[:] = np.arange(1000, dtype=np.uint32)
        held = column[10:20]  # a caller's view: the mapping must keep its data for it
        assert memory.recycle_when_dead(column)
        del block, column
        assert memory.recycled(1000) is None
        assert memory.recycled_bytes() == (0, 0)
        assert held.tolist() == list(range(10, 20))
        del held
        assert memory.recycled_bytes() == (2 * MIB, 0)
        reused = memory.recycled(MIB + 1)
        assert reused is not None and _inside(reused, region)
        assert memory.recycled_bytes() == (2 * MIB, MIB + 64)  # cache-line aligned
        assert memory.recycled(MIB) is None  # 1 MiB - 64 left
        assert memory.recycled(1000) is not None


@linux_only
def test_recycled_memory_takes_no_page_faults_when_written() -> None:
    with memory.recycling():
        block = anonymous_memory(32 * MIB, populate=True)
        memory.recycle_when_dead(block)
        del block
        reused = memory.recycled(32 * MIB)
        assert reused is not None
        assert faults_writing(reused) < 16
        fresh = empty(32 * MIB, np.uint8, dense=True)  # the pool is used up: fresh memory
        assert faults_writing(fresh) >= 32 * MIB // mmap.PAGESIZE // 2


def test_the_pool_takes_the_tightest_fit_and_lets_go_at_the_end_of_the_scope() -> None:
    with memory.recycling():
        small, large = anonymous_memory(MIB), anonymous_memory(4 * MIB)
        regions = [(small.ctypes.data, MIB), (large.ctypes.data, 4 * MIB)]
        for array in (small, large):
            memory.recycle_when_dead(array)
        del small, large, array
        first = empty(MIB // 8, np.int64, dense=True)  # fits both: the smaller one
        assert _inside(first, regions[0])
        second = empty(100, np.int32, dense=True)
        assert _inside(second, regions[1])
        assert not any(_inside(empty(100, np.int32), r) for r in regions)  # not dense: fresh
    assert memory.recycled(100) is None  # no scope: nothing is recycled
    assert regions[1] in memory.mapped_regions()  # ``second`` still views it
    del second
    assert regions[1] not in memory.mapped_regions()  # unmapped with its last array


def test_only_anonymous_memory_is_recycled_and_only_inside_a_scope() -> None:
    assert not memory.recycle_when_dead(np.zeros(MIB, np.uint8))
    assert not memory.recycle_when_dead(np.frombuffer(bytearray(MIB), np.uint8))
    block = anonymous_memory(MIB)
    assert memory.recycle_when_dead(block)
    region = (block.ctypes.data, MIB)
    del block  # dies outside any scope: unmapped as always, the next scope never sees it
    assert region not in memory.mapped_regions()
    with memory.recycling():
        assert memory.recycled_bytes() == (0, 0)
