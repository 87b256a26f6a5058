"""The one way the TCP analysis compiles its kernels: the reader's (:mod:`tcplens.capture.compiled`).

Kernels run only what is truly sequential (CONVENTIONS). They share the core's kernel cache
(:mod:`tcplens.kernel_cache`), keyed on every module of the core: the kernels inline each other
and freeze :mod:`tcplens.tcp.model` and :mod:`tcplens.capture.table` constants (event bits, RTT
kinds, flag bits) into their machine code. Parallel kernels (``prange`` over chunks of flows)
use the reader's fork-safe threading layer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from tcplens.capture import compiled as reader_kernels
from tcplens.capture.memory import recycled

# The kernels take and return numpy arrays of many dtypes, so they are typed Any for mypy (numba
# checks the types when it compiles them).


def kernel(function: Callable[..., object]) -> Any:
    """Compile ``function`` in nopython mode, cached."""
    return reader_kernels.kernel(function)


def inline_kernel(function: Callable[..., object]) -> Any:
    """A kernel numba inlines into its callers (no per-call passing of the arrays)."""
    return reader_kernels.inline_kernel(function)


def parallel_kernel(function: Callable[..., object]) -> Any:
    """A kernel whose ``numba.prange`` loops run on all cores (each iteration independent)."""
    return reader_kernels.parallel_kernel(function)


def empty(n: int, dtype: type[np.generic], *, dense: bool = False) -> npt.NDArray[Any]:
    """An uninitialised 1-D array, allocated by numba's runtime (plain malloc), not by numpy.

    ``dense``: every element is written soon after (not a generous region touched only where
    rows land), so it may take resident pages of arrays the analysis is done with, when the
    analysis consumes the packet table (:func:`tcplens.capture.memory.recycled`).

    numpy madvises every array of 4 MiB or more for transparent huge pages, which on this VM
    are cold (see :mod:`tcplens.capture.memory`): analyze_tcp spent 1.3-1.7 s of system time
    on bulk_5M with numpy's allocations, 0.4 s with these. glibc keeps freed memory for reuse
    (``tcplens.runtime.reuse_freed_memory``); pages are faulted in by first touch, so the untouched pages
    of a generous region cost address space only. Not populated ahead: the kernels that write
    these arrays run on all cores, and populating first saved ~0.05 s of system time at 5M but
    cost as much user time (the zeroed pages are no longer in the cache when written).
    One compiled specialisation serves every dtype (each costs ~1.5 ms to load): numba aligns
    its arrays to 32 bytes, enough for any dtype.
    """
    nbytes = n * np.dtype(dtype).itemsize
    raw = recycled(nbytes) if dense else None
    if raw is None:
        raw = _empty_bytes(np.empty(0, np.uint8), nbytes)
    out: npt.NDArray[Any] = raw.view(dtype)
    return out


def empty_columns(shapes: dict[str, tuple[int, type[np.generic]]]) -> dict[str, npt.NDArray[Any]]:
    """``empty(n, dtype, dense=True)`` for each ``name: (n, dtype)``, the largest first.

    The recycled memory (``capture.memory.recycled``) is a few blocks of dead table columns,
    each handed out best fit: in the order the caller lists its columns, a block could stay
    part empty because the next column is bigger than what is left while a smaller one later
    would fit. Largest first, every column that fits in what is left takes it: each byte
    recycled is a byte not faulted in fresh (~0.7 ns, issue 4).
    """
    order = sorted(shapes, key=lambda name: -shapes[name][0] * np.dtype(shapes[name][1]).itemsize)
    made = {name: empty(shapes[name][0], shapes[name][1], dense=True) for name in order}
    return {name: made[name] for name in shapes}


@kernel
def _empty_bytes(template, n):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    return np.empty(n, template.dtype)
