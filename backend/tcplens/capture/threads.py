"""numba's worker threads, each on a core of its own, for a process that owns its run; and the
scheduling of a helper thread of the decoding beside them.

A parallel kernel (``capture.compiled.parallel_kernel``) runs as one task per worker thread of
numba's ``workqueue`` layer, and the workers sleep between kernels. Woken together by the
thread that calls the kernel, the two workers were often queued on the same core (the Linux
scheduler places a woken thread near its waker), and the second ran only once the first was
done: in the decoding's kernel, timestamps taken at the start and end of each part showed the
two halves of a chunk one after the other in most of its 21 calls at bulk_5M (6.4-7.4 ms a
call, 3.7-4.2 ms with the workers pinned; the kernel in all 109 → 81 ms). A long kernel (the
per-packet state machine, ~0.1 s) lost less: the idle core takes a waiting thread after a few
milliseconds.

Only for ``tcplens analyze`` run as a program: the service's analysis processes may run side by
side, and workers pinned to the same cores there could not move away from each other.

``paging``'s helper, which makes the table's pages while the decoding runs, runs only on time no
other thread wants (``run_only_when_idle``). At the normal priority it took its share of a core
from the workers and the reading thread: per-thread ``schedstat`` of a bulk_5M decoding showed
the worker on its core waiting 28-49 ms to run and the reading thread 39-47 ms (mostly to start
the next chunk's kernel) in a decoding of 109-143 ms, while a core idled at other moments. Idle,
it populates in the gaps (between kernels, while a worker waits for a page) and the decoder
first-touches what it did not reach (bulk_5M, 10 interleaved rounds, medians: the decoding
117-121 → 101-107 ms).
"""

from __future__ import annotations

import contextlib
import os
import sys


def pin_kernel_threads() -> bool:
    """Start numba's worker threads now and pin each to one core of those this process may use;
    returns whether they were pinned.

    Left as they are when the threads cannot be told apart from others (another thread started
    meanwhile, numba's pool already running), when there are more workers than cores, or where
    affinity cannot be set (not Linux, a container refusing it).
    """
    if not sys.platform.startswith("linux") or not hasattr(os, "sched_setaffinity"):
        return False
    try:
        import numba
        from numba.np.ufunc import parallel

        import tcplens.capture.compiled  # noqa: F401  (chooses the threading layer, workqueue)

        cores = sorted(os.sched_getaffinity(0))
        before = set(os.listdir("/proc/self/task"))
        parallel._launch_threads()  # type: ignore[no-untyped-call]  # as before a first kernel
        workers = sorted(int(t) for t in set(os.listdir("/proc/self/task")) - before)
        count = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    except (ImportError, AttributeError, OSError):
        return False
    if len(workers) != count or not 1 < count <= len(cores):
        return False
    try:
        for worker, core in zip(workers, cores, strict=False):
            os.sched_setaffinity(worker, {core})
    except OSError:
        return False
    return True


def run_only_when_idle() -> None:
    """Run the calling thread only on time no other thread of the machine wants (Linux's
    ``SCHED_IDLE``), where the system allows it: for a helper whose work is a head start that
    the decoding would otherwise do itself (``paging``)."""
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is not None:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, idle, os.sched_param(0))


def run_normally(thread_id: int) -> None:
    """Put a thread that ``run_only_when_idle`` lowered back to the normal policy (``thread_id``:
    its native id), for it to finish without waiting behind the machine's other work."""
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(thread_id, os.SCHED_OTHER, os.sched_param(0))
