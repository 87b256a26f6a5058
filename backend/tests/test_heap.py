"""``tcplens.heap.release_memory_before_exit``: a one-shot run's memory goes back to the kernel
(the mapped regions and the free part of the heap) before the process exits.

Runs in a fresh interpreter: it tunes glibc for the whole process and reads its resident size.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

# the start of both scripts: the process's resident size as the kernel counts it
PRELUDE = """
import os

def resident_mib():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
"""

RELEASE = """
import numpy as np
from tcplens.capture.memory import anonymous_memory, mapped_regions
from tcplens.heap import release_memory_before_exit, reuse_freed_memory

reuse_freed_memory()  # as tcplens analyze: glibc keeps what the analysis frees
arena = anonymous_memory(96 << 20, populate=True)
arena[:] = 7
columns = [np.ones(2 << 20, np.int64) for _ in range(12)]  # 12 x 16 MiB from glibc's heap
del columns  # freed to the heap, still resident
before = resident_mib()
small = anonymous_memory(1 << 20)
release_memory_before_exit([(address, n) for address, n in mapped_regions() if n > 1 << 20])
after = resident_mib()
assert before - after > 96 + 150, (before, after)  # the arena and the heap's free pages
assert not arena[:: 1 << 12].any()  # the arena's pages were dropped: they read as zeros
print("released")

# a small run has nothing worth a thread: nothing is dropped
small[:] = 1
release_memory_before_exit([(address, n) for address, n in mapped_regions() if n <= 1 << 20])
assert small.all()
print("small")
"""


def test_a_finished_run_hands_its_memory_back_before_exiting() -> None:
    assert _printed(RELEASE) == ["released", "small"]


def test_the_regions_are_dropped_in_two_halves_of_about_the_same_size() -> None:
    from tcplens.heap import _halves

    regions = [(0x1000 * i, size) for i, size in enumerate([300, 100, 90, 80, 5, 5, 1], 1)]
    first, second = _halves(regions)
    assert sorted(first + second) == sorted(regions)
    assert sum(n for _, n in first) <= sum(n for _, n in second)  # the first trims the heap too
    assert sum(n for _, n in second) - sum(n for _, n in first) <= 300
    assert _halves([]) == ([], [])
    assert _halves([(4096, 7)]) == ([], [(4096, 7)])


KEPT = """
from dataclasses import dataclass
import numpy as np
from tcplens.capture.memory import anonymous_memory
from tcplens.heap import heap_pages, release_memory_before_exit, reuse_freed_memory

@dataclass(frozen=True)
class Columns:
    big: np.ndarray
    view: np.ndarray

@dataclass(frozen=True)
class Result:
    columns: Columns
    mapped: np.ndarray
    small: np.ndarray
    count: int

reuse_freed_memory()
big = np.ones(48 << 17, np.int64)  # 48 MiB from glibc (in use: malloc_trim leaves it)
mapped = anonymous_memory(8 << 20)
mapped[:] = 3
result = Result(Columns(big, big[5:100]), mapped, np.ones(100), 7)
pages = heap_pages(result)
assert len(pages) == 1, pages  # the view's root once; neither the mapping nor the small array
(address, nbytes), = pages
assert address % 4096 == 0 and nbytes % 4096 == 0
assert big.ctypes.data <= address and address + nbytes <= big.ctypes.data + big.nbytes
assert nbytes >= big.nbytes - 2 * 4096
before = resident_mib()
release_memory_before_exit(pages)
assert before - resident_mib() > 40, (before, resident_mib())
assert not big[512 : -512 : 512].any()  # its whole pages were dropped: they read as zeros
assert mapped.all()  # not listed: untouched
print("kept")
"""


def test_the_heap_pages_of_a_kept_result_are_released_too() -> None:
    assert _printed(KEPT) == ["kept"]


def _printed(script: str) -> list[str]:
    """What ``script`` (after the prelude) prints, run in a fresh interpreter; it must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PRELUDE) + textwrap.dedent(script)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.split()
