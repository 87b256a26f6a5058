"""``capture.compiled.take_next``: how the workers of a parallel kernel share its parts."""

from __future__ import annotations

import numba
import numpy as np

from tcplens.capture.compiled import WORKERS, take_next


# compiled at each run, not cached: the kernel cache is keyed on the package's modules, not the
# tests'
@numba.njit(parallel=True)
def _take_all(n: int) -> np.ndarray:  # pragma: no cover - compiled
    times = np.zeros(n, np.int64)  # how often each index was taken
    taken = np.zeros(1, np.int64)
    for _worker in numba.prange(WORKERS):  # as the parallel passes do
        while True:
            i = take_next(taken)
            if i >= n:
                break
            times[i] += 1
    return times


def test_the_workers_take_every_index_once() -> None:
    threads = numba.get_num_threads()
    try:
        for workers in {1, threads}:
            numba.set_num_threads(workers)
            for n in (0, 1, 7, 10_000):
                assert _take_all(n).tolist() == [1] * n
    finally:
        numba.set_num_threads(threads)
