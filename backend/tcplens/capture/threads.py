"""numba's worker threads, each on a core of its own, for a process that owns its run; and the
core where a helper thread of the decoding runs beside them.

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

``paging``'s helper, which makes the table's pages while the decoding runs, then shares the
first worker's core (``stay_beside_first_worker``): left free, it stayed on the core of the
thread that woke it, with the reading thread, whose next kernel call then waited for a turn
while the other core idled (bulk_5M, 5 runs each: the decoding 129-149 → 116-143 ms, medians
136 → 121; the decoding's parts go to whichever worker is free, ``decode``).
"""

from __future__ import annotations

import contextlib
import os
import sys

_pinned: list[int] = []  # the cores of the pinned workers, in the workers' order


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
            _pinned.append(core)
    except OSError:
        return False
    return True


def stay_beside_first_worker() -> None:
    """Keep the calling thread on the first pinned worker's core, if the workers are pinned."""
    if _pinned:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {_pinned[0]})
