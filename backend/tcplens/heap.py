"""How the analysis processes use the C heap (glibc malloc tuning)."""

from __future__ import annotations

import ctypes
import dataclasses
import mmap
import threading
from collections.abc import Sequence
from typing import Any

# below this the run is small: its exit frees little, not worth a thread (~0.2 ms)
_RELEASE_MIN = 32 << 20


def reuse_freed_memory() -> None:
    """Let glibc keep freed memory for the next allocation instead of returning it to the kernel.

    The analysis makes many short-lived arrays of one value per packet; by default glibc maps
    each big one fresh and unmaps it when freed, so every one costs a page fault per 4 KiB on
    first touch: on a 5M-packet capture that kernel time was about 40% of the run (profiled
    with getrusage: 1.3 s system vs 1.1 s user in the TCP analysis). Keeping the heap
    (M_TRIM_THRESHOLD, M_TOP_PAD) and serving arrays up to 32 MiB from it (M_MMAP_THRESHOLD, the
    largest glibc accepts) cut the 1M→5M marginal CPU time by 15-20%; peak memory is unchanged.
    A process-wide setting, so only processes that live for one analysis set it: ``tcplens
    analyze`` and the web worker's analysis fork server (its forked children inherit it), never
    the API or the worker itself. Not glibc: nothing to do. It also switches off numpy's huge
    page advice (``_no_huge_page_advice``), for the same reason: page faults of fresh arrays.
    """
    _no_huge_page_advice()
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # glibc malloc.h
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, (1 << 31) - 1)
    mallopt(m_top_pad, 256 << 20)


def _no_huge_page_advice() -> None:
    """Stop numpy from asking for transparent huge pages (madvise MADV_HUGEPAGE) on big arrays.

    numpy advises every array of 4 MiB or more; where THP defrag is "madvise" (Debian's
    default) each first touch of such an array may stall in direct memory compaction when free
    memory is fragmented — the case on a busy host. Measured by the tcp engineer on bulk_5M, same
    minute, in process: system time of read 1.10 -> 0.38 s and of the TCP analysis 0.96 ->
    0.51 s, user time unchanged, peak RSS 1799 -> 1746 MiB. Process-wide, like mallopt.
    """
    import numpy as np

    advise = getattr(getattr(np, "_core", None), "multiarray", None)
    set_advice = getattr(advise, "_set_madvise_hugepage", None)
    if set_advice is not None:
        set_advice(False)


def release_memory_before_exit(regions: Sequence[tuple[int, int]]) -> None:
    """Hand a finished one-shot run's memory back to the kernel on two cores before it exits.

    The kernel frees a page in ~0.1-0.4 us, and an exiting process frees all of its pages on
    one core: ~0.1 s after the JSON of a 5M-packet capture was written on a quiet machine,
    0.35 s at load 5. Most of it is two blocks, dead once the output is written (memory's
    measurement at 5M: the glibc heap held 1031 MB free, ~530 MB of it resident, and 17 MB in
    use, since the TCP analysis's arrays were freed back to it; the PacketTable arena 310 MB):
    ``regions`` (``capture.memory.mapped_regions``) are dropped with MADV_DONTNEED on a second
    thread while this one trims the heap (``malloc_trim``: glibc madvises away the pages of
    every free chunk). Both calls release the GIL. The caller must never read the memory of
    ``regions`` again (it reads as zeros). Not Linux with glibc: nothing to do.
    """
    if sum(nbytes for _, nbytes in regions) < _RELEASE_MIN:
        return
    try:
        malloc_trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    malloc_trim.argtypes = [ctypes.c_size_t]
    # (imported here: this module is loaded before numpy, which capture.memory needs)
    from tcplens.capture.memory import drop_range

    def drop(part: Sequence[tuple[int, int]]) -> None:
        for address, nbytes in part:
            drop_range(address, nbytes)

    # the regions in two halves of about the same size: one dropped on a second thread, the
    # other here once the heap is trimmed (the trim alone took 0.005-0.02 s at 5M packets, the
    # regions ~0.03 s: handed to the second thread alone, this one then waited for it)
    here, there = _halves(regions)
    dropping = threading.Thread(target=drop, args=(there,))
    dropping.start()
    malloc_trim(0)
    drop(here)
    dropping.join()


def heap_pages(kept: object) -> list[tuple[int, int]]:
    """``(address, nbytes)`` of the whole pages of C heap memory under the numpy arrays in
    ``kept`` (an array, or a dataclass whose fields hold them, at any depth), for
    ``release_memory_before_exit``: the memory of a result kept alive to the end.

    A one-shot run keeps its analysis until it exits (freed one array at a time, it would go
    back to the kernel on one core), and most of its columns come from the heap (the events'
    kernels allocate them: 146 MiB of Segments at 5M packets), which ``malloc_trim`` does not
    release: it is in use. Left to the exit, the kernel freed them on one core. Only whole pages
    inside an array's data are listed: the allocator's own bytes around them stay. Arrays of
    ``capture.memory`` mappings (or any other buffer) are left out: ``mapped_regions`` lists
    those; so are arrays under 16 pages, not worth a call.
    """
    import numpy as np

    pages: dict[int, int] = {}

    def visit(value: Any) -> None:
        if isinstance(value, np.ndarray):
            root = value
            while isinstance(root.base, np.ndarray):
                root = root.base
            if isinstance(root.base, memoryview) or root.nbytes < _PAGES_MIN:
                return  # a mapping (or a buffer) listed elsewhere, or too small
            start = -(-root.ctypes.data // mmap.PAGESIZE) * mmap.PAGESIZE
            end = (root.ctypes.data + root.nbytes) // mmap.PAGESIZE * mmap.PAGESIZE
            if end > start:
                pages[start] = end - start
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                visit(getattr(value, field.name))

    visit(kept)
    return list(pages.items())


_PAGES_MIN = 16 * mmap.PAGESIZE


def _halves(
    regions: Sequence[tuple[int, int]],
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The regions in two lists whose sizes differ by at most the largest region, the second
    the larger (the first goes to the thread that trims the heap first)."""
    halves: tuple[list[tuple[int, int]], list[tuple[int, int]]] = ([], [])
    sizes = [0, 0]
    for region in sorted(regions, key=lambda r: -r[1]):
        smaller = 0 if sizes[0] < sizes[1] else 1
        halves[smaller].append(region)
        sizes[smaller] += region[1]
    return (halves[0], halves[1]) if sizes[0] <= sizes[1] else (halves[1], halves[0])
