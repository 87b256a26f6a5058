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
  ``tcplens.runtime.ENVIRONMENT``).

Nothing here is per packet: one mapping per array (or per arena of columns), populated in a
few system calls. The mappings alive at any moment are listed by ``mapped_regions``.

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


def anonymous_memory(nbytes: int, *, populate: bool = False) -> U8:
    """``nbytes`` of zero-filled memory mapped for this array alone, freed with its last view.

    Not ``np.empty``/``np.zeros``: numpy asks for transparent huge pages on arrays ≥ 4 MiB,
    which are cold on this VM (module docstring). ``populate``: every byte will be written
    soon, so fault all its pages in now, on all cores. Otherwise pages are faulted in by their
    first touch, and pages never touched (sparse columns, generous regions) cost address space
    only.
    """
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    mapping = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    memory = np.frombuffer(mapping, np.uint8)
    _live[memory.ctypes.data] = mapping
    if populate and _can_populate:
        _populate_parallel(memory.ctypes.data, nbytes, _cores())
    if populate and not _can_populate:
        memory[:: mmap.PAGESIZE] = 0  # no MADV_POPULATE_WRITE: touch each page once
    return memory


def mapped_regions() -> list[tuple[int, int]]:
    """``(address, nbytes)`` of every mapping ``anonymous_memory`` made that is still alive."""
    return [(address, len(mapping)) for address, mapping in list(_live.items())]


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
