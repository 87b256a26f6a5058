"""How a process that runs the analysis is set up: a one-shot ``tcplens analyze`` (``one_shot``,
``exit_now``) or the service's analysis fork server (``fork_server``), whose forked children run
the analyses and inherit everything set here.

Process-wide settings live here and nowhere else; importing the analysis core changes none of
them (it only points numba at its kernel cache: :mod:`tcplens.kernel_cache`). Settings that a
library reads from the environment are set there, before the library is imported.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import logging
import os
import subprocess
import sys
from typing import NoReturn

logger = logging.getLogger(__name__)

# Read when the library loads (so set before numpy is imported); the user's own settings win.
# - numpy's bundled OpenBLAS starts a pool of threads that spin waiting for work (3.4 % of a
#   5M-packet analysis's CPU samples in perf); nothing here uses BLAS.
# - numpy advises every array of 4 MiB or more for transparent huge pages (madvise); where THP
#   defrag is "madvise" (Debian's default) a first touch of such an array may stall in direct
#   compaction on a busy host, and on this VM's balloon cold huge pages cost 2.4-2.8 ns/B (see
#   capture.memory). bulk_5M, in process: system time of the read 1.10 -> 0.38 s, of the TCP
#   analysis 0.96 -> 0.51 s without the advice.
ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "NUMPY_MADVISE_HUGEPAGE": "0"}

# numba's own thread pool for the parallel kernels: the analyses run in processes forked from a
# fork server that ran kernels itself, and GNU OpenMP (numba's first choice where installed)
# aborts a process that forks after using it; ``workqueue`` survives fork but must not be entered
# by two threads at once (the core calls parallel kernels from one thread of a process)
THREADING_LAYER = "workqueue"


def one_shot() -> None:
    """Set up a process that runs one analysis and exits (``tcplens analyze`` run as a program),
    before numpy is imported.

    No cyclic garbage collection: importing numpy and numba and loading the kernels allocate
    ~10^5 objects that live until the end, and the collector traversed them again and again
    (gc_collect_main 14 % of the CPU samples of a small capture's analysis). What the analysis
    frees, reference counting frees.
    """
    for name, value in ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    gc.disable()
    _analysis_process()


def exit_now(code: int) -> NoReturn:
    """End a one-shot process once its output is out, without tearing the interpreter down.

    Finalisation would free every object and unmap every array one by one: 0.3 s after the
    JSON of a 5M-packet capture was written. The command has flushed and closed what it writes;
    the flushes here are for anything left in the buffers (a broken pipe was already answered).
    """
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None: the process started with that descriptor closed
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    os._exit(code)


def fork_server() -> None:
    """Set up the analysis fork server (``services.analysis``'s preload, before numpy is
    imported): every analysis forked from it inherits the settings, the loaded kernels and the
    imported modules, and starts warm.

    The kernels are compiled first if their cache is not complete (the install step fills it),
    in a process of its own: numba's compiler keeps ~1 GB resident in the process that used it,
    which the server would have kept for its whole life (should that process fail, the server
    still compiles nothing: each analysis does, in its own short-lived process). Then every
    kernel is run once on tiny captures (``kernel_build.run_every_kernel``), which loads it here rather than in each
    analysis (about a second each). What the server has loaded lives as long as it does: out of
    the cyclic collector's sight (``gc.freeze``), so no collection in a forked analysis walks
    those ~10^5 objects again, nor copies their pages by writing GC headers (a full collection in
    a forked analysis took 0.14 s of CPU before, nothing after).
    """
    for name, value in ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    _analysis_process()
    from tcplens import kernel_build, kernel_cache

    if not kernel_cache.is_built():
        logger.warning("the analysis kernels are not compiled yet: compiling them (once)")
        subprocess.run([sys.executable, "-m", "tcplens.cli", "kernels"], check=False)
    if kernel_cache.is_built():
        try:
            kernel_build.run_every_kernel()
        except Exception:  # a failed warm-up only costs time; the real analysis reports errors
            logger.warning("analysis warm-up failed", exc_info=True)
    else:  # never compiled here: each analysis compiles what it runs (into the cache) and exits
        logger.error("the analysis kernels could not be compiled ahead: analyses will compile them")
    gc.freeze()


def _analysis_process() -> None:
    """What every process that runs kernels on large captures sets: numba's threading layer
    (set in the environment as well: numba re-reads its configuration from there before each
    compilation) and the C heap (``reuse_freed_memory``)."""
    os.environ["NUMBA_THREADING_LAYER"] = THREADING_LAYER
    import numba

    numba.config.THREADING_LAYER = THREADING_LAYER  # type: ignore[attr-defined]
    reuse_freed_memory()


def reuse_freed_memory() -> None:
    """Let glibc keep freed memory for the next allocation instead of returning it to the kernel.

    The analysis makes many short-lived arrays of one value per packet; by default glibc maps
    each big one fresh and unmaps it when freed, so every one costs a page fault per 4 KiB on
    first touch: on a 5M-packet capture that kernel time was about 40 % of the run (1.3 s system
    vs 1.1 s user in the TCP analysis). Keeping the heap (M_TRIM_THRESHOLD, M_TOP_PAD) and
    serving arrays up to 32 MiB from it (M_MMAP_THRESHOLD, the largest glibc accepts) cut the
    1M→5M marginal CPU time by 15-20 %; with it off, a forked analysis took 1.56x as long and
    its storing 2.06x (issue 28's measurement). Peak memory is unchanged. glibc's ``mallopt``
    (malloc.h); not glibc: nothing to do. Process-wide, so only processes that live for
    analyses set it (``tcplens analyze``, the fork server and so its children), never the API
    or the worker.
    """
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # glibc malloc.h
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, (1 << 31) - 1)
    mallopt(m_top_pad, 256 << 20)
