"""Fresh memory for the per-packet arrays: how it is mapped and when its pages are faulted in.

Fresh memory is the largest per-packet cost of the analysis (~245 bytes per packet at 5M
packets in session 3): the kernel zeroes and maps every page on its first use. Measured on the
2-core Firecracker VM the project runs on (kernel 6.18), CPU time per byte:

* 4 KiB pages faulted by first touch: 0.55-0.75 ns; populated at once (``MADV_POPULATE_WRITE``,
  Linux 5.14, or ``MAP_POPULATE``): 0.33-0.38 ns, whether the memory was just freed or not,
  and split over the cores the populating scales with them. Populating saves no CPU time
  overall where a kernel on all cores writes the memory right after: the first touch zeroes a
  page just before it is written, in the cache, while populated pages are out of the cache by
  then (Segments at 5M: system time -0.05 s, user time +0.05 s). It pays where one core
  would otherwise take the faults while the other idles;
* transparent huge pages: 0.09-0.16 ns when the 2 MiB blocks are warm, but 2.4-2.8 ns of CPU
  (7-9 ns of wall time) cold: the VM's balloon reports free 2 MiB blocks back to the host
  about 2 s after they are freed (virtio-balloon free page reporting), and the host faults
  them in again. Only a run starting < 2 s after another freed its huge pages finds them warm,
  and only as many as were freed. A guard that populated huge pages step by step and fell back
  to 4 KiB pages at the first cold step worked (it cost one 2 MiB step) but found them warm
  only for the first few tens of MiB of a run: a run that falls back frees 4 KiB pages, so
  the next one finds no warm huge pages either. Unguarded, the first run of a sequence took
  2-3 s longer at 5M packets. So huge pages are not used (numpy's advice is off as well:
  ``heap.reuse_freed_memory``).

Nothing here is per packet: one mapping per array (or per arena of columns), populated in a
few system calls. The mappings alive at any moment are listed by ``mapped_regions``: a one-shot
process that has written its result can release them on all cores before it exits, instead of
leaving them to the kernel's single-threaded teardown at exit.

Recycling (``recycling``, ``recycle_when_dead``, ``recycled``): the cheapest fresh page is one
that is not fresh. While a ``recycling()`` scope runs, a mapping whose arrays were handed over
with ``recycle_when_dead`` joins a pool at the moment its last view dies (Python's reference
count, so an array anyone still holds is never reused: it keeps its data), and ``recycled``
carves uninitialised arrays out of the pool's mappings, whose pages are resident: rewriting a
resident page costs ~0.04 ns/B here against 0.67-0.95 ns/B for a fresh one.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import mmap
import os
import sys
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

U8 = npt.NDArray[np.uint8]

_MADV_POPULATE_WRITE = 23  # linux/mman.h, Linux 5.14
_MADV_DONTNEED = 4  # linux/mman.h
# smaller ranges populate in one call: starting and joining a thread costs ~0.1-0.3 ms, the
# time to populate 0.3-0.8 MiB
_PARALLEL_MIN = 8 << 20


# every mapping ``anonymous_memory`` made that is still alive, by address (an entry goes with its
# mapping, that is with the last view of its array)
_live: weakref.WeakValueDictionary[int, mmap.mmap] = weakref.WeakValueDictionary()


def _libc_madvise() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


_madvise = _libc_madvise()
_can_populate = _madvise is not None and sys.platform.startswith("linux")


def _populate(address: int, nbytes: int) -> None:
    """Fault in ``nbytes`` at ``address`` for writing (on an older kernel: note it cannot).

    From the start of ``address``'s page: madvise refuses an unaligned address with the EINVAL
    an older kernel gives, which would turn populating off for the rest of the process."""
    global _can_populate
    assert _madvise is not None
    start = address - address % mmap.PAGESIZE
    if (
        _madvise(start, nbytes + (address - start), _MADV_POPULATE_WRITE) != 0
        and ctypes.get_errno() == errno.EINVAL
    ):
        _can_populate = False  # Linux < 5.14; ENOMEM: the first touches will meet it


def _cores() -> int:
    """The cores this process may run on (at most 4: beyond, populating is bandwidth-bound)."""
    return min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1, 4)


def _parts(address: int, nbytes: int, count: int) -> list[tuple[int, int]]:
    """``(address, nbytes)`` of ``count`` page-aligned parts covering the range, none empty."""
    pages = -(-nbytes // mmap.PAGESIZE)
    bounds = [address + pages * i // count * mmap.PAGESIZE for i in range(count)]
    bounds.append(address + nbytes)
    return [(start, end - start) for start, end in itertools.pairwise(bounds) if end > start]


def _populate_parallel(address: int, nbytes: int, cores: int) -> None:
    """Populate on ``cores`` cores: the caller waits for the memory anyway, and the kernel's
    page allocation scales across cores (0.36 ns/B each).

    Every thread is started before any part is populated, then all are released at once: a
    populate holds the mm's ``mmap_lock`` (for reading) from start to end, and starting a thread
    maps its stack (``mmap_lock`` for writing), so a thread started while another part populates
    waits for that part to finish — the parts then ran one after the other (the 5M-packet
    arena, 280 MB: 0.096-0.107 s wall = system time; started first: 0.048-0.061 s wall).
    """
    parts = _parts(address, nbytes, cores if nbytes >= _PARALLEL_MIN else 1)
    if len(parts) == 1:
        _populate(address, nbytes)
        return
    released = threading.Event()

    def populate_when_released(start: int, size: int) -> None:
        released.wait()
        _populate(start, size)

    started: list[threading.Thread] = []
    for part in parts[1:]:
        thread = threading.Thread(target=populate_when_released, args=part)
        try:
            thread.start()
        except RuntimeError:  # no more threads (a process limit): this one populates the rest
            break
        started.append(thread)
    released.set()  # always: a started thread must never wait for ever
    for part in [parts[0], *parts[1 + len(started) :]]:
        _populate(*part)
    for thread in started:
        thread.join()


def anonymous_memory(nbytes: int, *, populate: bool = False, dense: bool = False) -> U8:
    """``nbytes`` of zero-filled memory mapped for this array alone, freed with its last view.

    Not ``np.empty``/``np.zeros``: numpy asks for transparent huge pages on arrays ≥ 4 MiB,
    which are cold on this VM (module docstring). ``populate``: every byte will be written
    soon, so fault all its pages in now, on all cores. Otherwise pages are faulted in by their
    first touch, and pages never touched (sparse columns, generous regions) cost address space
    only. ``dense``: every byte will be written (the packet table's columns), so the mapping
    starts with the pages of the ``WarmReserve`` if one was made ahead.
    """
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    mapping = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory = np.frombuffer(mapping, np.uint8)
    _live[memory.ctypes.data] = mapping
    warm = _warm.take_into(memory.ctypes.data, nbytes) if dense and _warm is not None else 0
    if warm:
        _warm_bytes[mapping] = warm
    if populate and _can_populate and warm < nbytes:
        _populate_parallel(memory.ctypes.data + warm, nbytes - warm, _cores())
    if populate and not _can_populate:
        memory[warm :: mmap.PAGESIZE] = 0  # no MADV_POPULATE_WRITE: touch each page once
    return memory


def mapped_regions() -> list[tuple[int, int]]:
    """``(address, nbytes)`` of every mapping ``anonymous_memory`` made that is still alive.

    For a process about to exit once its output is written (the PacketTable's arena is ~62 bytes
    per packet): whoever releases these must be sure nothing reads the arrays again.
    """
    return [(address, len(mapping)) for address, mapping in list(_live.items())]


def populate_range(address: int, nbytes: int) -> None:
    """Fault in the pages of ``nbytes`` at ``address`` (in an ``anonymous_memory`` array) for
    writing, on this thread, without holding the GIL: for a helper thread that populates what
    a kernel on the other threads is about to write (``capture.paging``)."""
    if _can_populate and nbytes > 0:
        _populate(address, nbytes)


def drop_range(address: int, nbytes: int) -> None:
    """Drop the pages of ``nbytes`` at ``address`` from this process (``MADV_DONTNEED``; a
    file mapping reads them again from the page cache if touched), without holding the GIL
    (``mmap.madvise`` holds it: 0.02 s at 5M packets for the capture's mapped pages)."""
    if _madvise is not None and nbytes > 0 and sys.platform.startswith("linux"):
        _madvise(address, nbytes, _MADV_DONTNEED)


@dataclass
class _Spare:
    """A dead mapping in the pool: ``memory`` views all of it, ``used`` bytes are handed out."""

    memory: U8
    used: int = 0


# the pool of the ``recycling()`` scope in progress (None: no scope, nothing is recycled)
_pool: list[_Spare] | None = None
# the roots armed by ``recycle_when_dead`` whose views are not all dead yet, by id
_armed: dict[int, weakref.finalize[..., Any]] = {}
_ALIGN = 64  # each recycled array starts on a cache line, like the table's columns


@contextlib.contextmanager
def recycling() -> Iterator[None]:
    """A scope in which dead mappings handed over with ``recycle_when_dead`` are reused by
    ``recycled``. At its end the pool lets go of them: each is unmapped when the last array
    carved out of it dies, and mappings that die later are unmapped at once, as always."""
    global _pool
    outer, _pool = _pool, []
    try:
        yield
    finally:
        _pool = outer


def recycle_when_dead(array: npt.NDArray[Any]) -> bool:
    """Offer the ``anonymous_memory`` mapping under ``array`` to the pool, to join it when its
    last view dies (with ``array`` itself, if the caller's was the last reference: the caller
    drops it right after). Returns False (nothing to recycle) for memory not mapped here."""
    found = _mapping_under(array)
    if found is None:
        return False
    root, mapping = found
    if id(root) not in _armed:
        _armed[id(root)] = weakref.finalize(root, _join_pool, id(root), mapping)
        _armed[id(root)].atexit = False
    return True


def _mapping_under(array: npt.NDArray[Any]) -> tuple[U8, mmap.mmap] | None:
    """The whole-mapping array under ``array`` and its ``anonymous_memory`` mapping, or None
    for memory not mapped here (numpy collapses a view of a view onto that array)."""
    root = array.base if isinstance(array.base, np.ndarray) else array
    view = root.base
    if not isinstance(view, memoryview) or not isinstance(view.obj, mmap.mmap):
        return None
    mapping = view.obj
    if _live.get(root.ctypes.data) is not mapping or root.nbytes != len(mapping):
        return None
    return root, mapping


def warm_end(array: npt.NDArray[Any]) -> int:
    """The address up to which the mapping under ``array`` came with pages of the
    ``WarmReserve`` (its start if none, 0 for memory not mapped here): a populate would find
    them there already (``paging`` skips them)."""
    found = _mapping_under(array)
    if found is None:
        return 0
    root, mapping = found
    return int(root.ctypes.data) + _warm_bytes.get(mapping, 0)


def _join_pool(root_id: int, mapping: mmap.mmap) -> None:
    """The last view of ``mapping``'s memory died: it is free for ``recycled``."""
    _armed.pop(root_id, None)
    if _pool is not None:
        _pool.append(_Spare(np.frombuffer(mapping, np.uint8)))


def recycled(nbytes: int) -> U8 | None:
    """``nbytes`` of memory from the pool, uninitialised (it holds what dead arrays held), or
    None when no mapping in the pool has room (or no ``recycling()`` scope runs).

    Best fit: the mapping with the least room that holds ``nbytes``, so the large holes stay
    for large arrays. For arrays whose every element is written before it is read.
    """
    if _pool is None or nbytes <= 0:
        return None
    best: _Spare | None = None
    for spare in list(_pool):  # (a view dying meanwhile may append to the pool)
        room = spare.memory.shape[0] - spare.used
        if room >= nbytes and (best is None or room < best.memory.shape[0] - best.used):
            best = spare
    if best is None:
        return None
    start = best.used
    best.used = min(best.memory.shape[0], start + -(-nbytes // _ALIGN) * _ALIGN)
    return best.memory[start : start + nbytes]


def recycled_bytes() -> tuple[int, int]:
    """``(bytes in the pool, bytes handed out)`` of the scope in progress, (0, 0) without."""
    spares = list(_pool or ())
    return sum(s.memory.shape[0] for s in spares), sum(s.used for s in spares)


class WarmReserve:
    """Zero-filled pages faulted in ahead, while the process starts on one core and the other
    idles (``ahead.MappedAhead``), for the dense ``anonymous_memory`` mappings that follow: the
    packet table's columns, 51-55 bytes a packet, whose pages otherwise come from ``paging``
    while the decoder runs on both cores (0.35-0.75 ns of CPU a byte here: ~0.1 s of a core at
    5M packets).

    ``touch`` (one helper thread) writes a zero to each page, a step at a time: a first touch
    takes only the mapping's own lock, where a populate would hold the process's ``mmap_lock``
    and stall the imports' own mappings (see ``ahead``). ``close`` stops it and unmaps the pages
    it did not reach; ``take_into`` then moves touched pages, front first, into a new mapping
    with ``mremap`` (their page table entries move: nothing is copied or faulted again).
    The reserve is mapped with libc's ``mmap`` rather than an ``mmap.mmap`` object, which would
    unmap its whole range when collected, pages moved away and other mappings since placed in
    the range included.
    """

    def __init__(self, address: int, nbytes: int) -> None:
        self._address = address
        self.nbytes = nbytes
        self.warm = 0  # bytes from the front touched
        self._taken = 0  # bytes from the front moved out or unmapped
        self._closed = False
        self._touching = threading.Lock()

    def touch(self, step: int) -> None:
        """Touch every page, ``step`` bytes at a time, until all are or the reserve is closed."""
        with self._touching:
            if self._closed:
                return
            pages = _raw_view(self._address, self.nbytes)
            while self.warm < self.nbytes and not self._closed:
                end = min(self.nbytes, self.warm + step)
                pages[self.warm : end : mmap.PAGESIZE] = 0
                self.warm = end

    def stop(self) -> None:
        """Stop the touching after its current step, without waiting for that step (``close``
        waits, and ``take_into`` closes: by then the step is usually done)."""
        self._closed = True

    def close(self) -> None:
        """Stop the touching (after its current step) and unmap the pages it did not reach."""
        self.stop()
        with self._touching:
            if self.warm < self.nbytes:
                _munmap(self._address + self.warm, self.nbytes - self.warm)
                self.nbytes = self.warm

    def release(self) -> None:
        """Unmap the touched pages not taken (once the dense mappings are made)."""
        self.close()
        if self._taken < self.nbytes:
            _munmap(self._address + self._taken, self.nbytes - self._taken)
            self._taken = self.nbytes

    def left(self) -> tuple[int, int]:
        """``(address, nbytes)`` of the pages still in the reserve (touched or not)."""
        return self._address + self._taken, self.nbytes - self._taken

    def take_into(self, address: int, nbytes: int) -> int:
        """Move up to ``nbytes`` (rounded up to whole pages) of touched pages to ``address`` (a
        private anonymous mapping of at least that many pages); returns the bytes moved, whole
        pages (``warm_end`` and ``paging`` count on page boundaries)."""
        self.close()
        size = min(-(-nbytes // mmap.PAGESIZE) * mmap.PAGESIZE, self.nbytes - self._taken)
        if size <= 0 or _mremap is None:
            return 0
        source = self._address + self._taken
        if _mremap(source, size, size, _MREMAP_MAYMOVE | _MREMAP_FIXED, address) != address:
            return 0  # (ENOMEM: more mappings than vm.max_map_count) the pages stay here
        self._taken += size
        return size


_MREMAP_MAYMOVE = 1  # linux/mman.h
_MREMAP_FIXED = 2
_PROT_READ_WRITE = 0x1 | 0x2
_MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20
_MAP_FAILED = ctypes.c_void_p(-1).value


def _libc_calls() -> tuple[Any, Any, Any] | None:
    """libc's ``mmap``, ``munmap`` and ``mremap`` (Linux only: mremap is)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mmap_, munmap, mremap = libc.mmap, libc.munmap, libc.mremap
    except (OSError, AttributeError):
        return None
    mmap_.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int]
    mmap_.argtypes += [ctypes.c_int, ctypes.c_long]
    mmap_.restype = ctypes.c_void_p
    munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
    mremap.argtypes += [ctypes.c_void_p]
    mremap.restype = ctypes.c_void_p
    return mmap_, munmap, mremap


_libc = _libc_calls()
_mremap = None if _libc is None else _libc[2]


def _munmap(address: int, nbytes: int) -> None:
    assert _libc is not None
    _libc[1](address, nbytes)


def _raw_view(address: int, nbytes: int) -> U8:
    """A numpy view of memory this module mapped itself (it owns nothing)."""
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(address))


# the reserve made ahead, if any (one per process: ``make_warm_reserve``)
_warm: WarmReserve | None = None
# bytes from its start each mapping took from the reserve (an entry goes with its mapping)
_warm_bytes: weakref.WeakKeyDictionary[mmap.mmap, int] = weakref.WeakKeyDictionary()


def make_warm_reserve(nbytes: int) -> WarmReserve | None:
    """The process's reserve of ``nbytes`` (whole pages), for a helper thread to ``touch``;
    None where it cannot be had (not Linux, or the mapping refused)."""
    global _warm
    if _libc is None or nbytes <= 0:
        return None
    nbytes = -(-nbytes // mmap.PAGESIZE) * mmap.PAGESIZE
    address = _libc[0](None, nbytes, _PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS, -1, 0)
    if address is None or address == _MAP_FAILED:
        return None
    if _warm is not None:
        _warm.release()
    _warm = WarmReserve(address, nbytes)
    return _warm


def release_warm_reserve() -> None:
    """The dense mappings are made: unmap what is left of the reserve, if there is one."""
    global _warm
    if _warm is not None:
        _warm.release()
        _warm = None


def stop_warm_reserve() -> None:
    """Stop making the reserve (the reader starts), without waiting for the step in progress:
    ``anonymous_memory`` takes what is touched when the table is mapped."""
    if _warm is not None:
        _warm.stop()
