"""``tcplens.capture.threads``: numba's worker threads started and pinned one per core, a
helper thread run on idle time only, ``capture.compiled.take_next``, how the workers share a
kernel's parts, and the kernel caches' digest, which covers that shared kernel code.

The pinning runs in a fresh interpreter: it starts numba's thread pool, once per process, and
pinned threads would stay pinned for the rest of the test session.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

from tcplens.capture.compiled import WORKERS, take_next
from tcplens.capture.threads import run_normally, run_only_when_idle

BACKEND = Path(__file__).resolve().parents[2]


# compiled at each run, not cached: a cached copy would keep an older take_next inlined (the
# kernel cache's digest covers the package's modules, not the tests')
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


PINNED = """
import os, sys
from tcplens.commands.cached_kernels import load_cached_kernels_quickly
from tcplens.capture.threads import pin_kernel_threads

load_cached_kernels_quickly(one_process=True)
before = set(os.listdir("/proc/self/task"))
print(pin_kernel_threads())
workers = sorted(int(t) for t in set(os.listdir("/proc/self/task")) - before)
print([sorted(os.sched_getaffinity(t)) for t in workers])
import numba
print(numba.threading_layer())
print(pin_kernel_threads())  # the pool runs: nothing more to pin
print(sorted(os.sched_getaffinity(0)))  # the calling thread is left where it was
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="thread affinity is Linux's")
def test_each_worker_runs_on_a_core_of_its_own() -> None:
    cores = sorted(os.sched_getaffinity(0))
    env = {**os.environ, "PYTHONPATH": str(BACKEND), "NUMBA_NUM_THREADS": "2"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PINNED)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    pinned, affinities, layer, again, caller = done.stdout.splitlines()
    assert caller == str(cores)
    assert layer == "workqueue"  # the layer the kernels are made for (capture.compiled)
    assert again == "False"
    if len(cores) < 2:  # more workers than cores: left to the scheduler
        assert pinned == "False"
        return
    assert pinned == "True"
    assert affinities == str([[cores[0]], [cores[1]]])


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_a_helper_runs_only_when_idle_until_put_back() -> None:
    lowered = threading.Event()
    done = threading.Event()
    seen: list[int] = []

    def helper() -> None:
        run_only_when_idle()
        seen.append(os.sched_getscheduler(0))
        lowered.set()
        done.wait(60)
        seen.append(os.sched_getscheduler(0))

    thread = threading.Thread(target=helper)
    thread.start()
    assert lowered.wait(60)
    assert thread.native_id is not None
    run_normally(thread.native_id)
    done.set()
    thread.join()
    assert seen == [os.SCHED_IDLE, os.SCHED_OTHER]
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the caller's own policy is untouched


def test_a_kernel_cache_is_dropped_when_the_shared_kernel_code_changes(tmp_path: Path) -> None:
    """Every package's kernels inline ``capture.compiled`` (``take_next``, ``in_turn``): its
    digest covers that module as well as the package's own kernel modules."""
    from tcplens.capture import compiled

    package = tmp_path / "pkg"
    (package / "__pycache__").mkdir(parents=True)
    (package / "mod.py").write_text("x = 1\n")
    cached = package / "__pycache__" / "mod.f-1.py311.nbi"
    compiled.drop_stale_kernel_cache(str(package / "mod.py"), ("mod",))
    tag = (package / "__pycache__" / "kernels.sha256").read_text()
    cached.write_bytes(b"machine code")
    compiled.drop_stale_kernel_cache(str(package / "mod.py"), ("mod",))
    assert cached.exists()  # nothing changed: the cache stays
    shared = Path(compiled.__file__).read_bytes()
    assert tag == hashlib.sha256(shared + b"x = 1\n").hexdigest()
