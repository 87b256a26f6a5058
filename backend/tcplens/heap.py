"""How the analysis processes use the C heap (glibc malloc tuning)."""

from __future__ import annotations


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
    import ctypes

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
