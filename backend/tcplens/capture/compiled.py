"""The one way the reader compiles its per-packet kernels: numba, cached on disk.

Kernels are the only place a loop runs per packet (CONVENTIONS: never in Python). ``cache=True``
stores the machine code in the core's kernel cache (:mod:`tcplens.kernel_cache`), so a process
pays only the load (~0.2 s) and not the compilation. Importing this module imports numba, so the reader imports the
kernel modules lazily, inside ``read_capture``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from tcplens import kernel_cache
from tcplens.capture.table import U8

F = TypeVar("F", bound=Callable[..., object])

# numba's cache for every kernel of the core, keyed on all of the core's sources (kernel_cache):
# set before any kernel is defined, and every kernel module imports this one first
kernel_cache.use()


def kernel(function: F) -> F:
    """Compile ``function`` in nopython mode, cached; typed as the function itself for mypy."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


def parallel_kernel(function: F) -> F:
    """A kernel whose ``numba.prange`` loops run on all cores (rows independent of each other).

    The threading layer is numba's own ``workqueue`` (``tcplens.runtime`` sets it): the analysis
    runs in processes forked from a warmed-up fork server, and GNU OpenMP (numba's first choice
    when present) aborts a process that forks after using it. ``workqueue`` survives fork but
    must not be entered by two threads at once: call parallel kernels from one thread of a
    process.
    """
    return cast(F, numba.njit(cache=True, nogil=True, parallel=True)(function))


def inline_kernel(function: F) -> F:
    """A kernel numba inlines into its callers (``inline="always"``), for helpers taking arrays.

    A call to a compiled function passes each array as a struct and increments and decrements
    its reference count (atomic operations); for the TCP options parser that was half the decode
    time. Inlined, the caller sees the arrays directly.
    """
    return cast(F, numba.njit(cache=True, nogil=True, inline="always")(function))


@intrinsic
def _take_next(typingctx, counter):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """``counter[0]``, then ``counter[0] + 1`` in its place, in one atomic step (LLVM's atomicrmw
    add): the index each worker of a parallel kernel takes next, so that a worker slowed down
    (its core shared with another thread) takes fewer parts instead of holding up the kernel.
    ``counter`` is a 1-D int64 array."""
    signature = types.int64(counter)

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        array = context.make_array(sig.args[0])(context, builder, args[0])
        first = cgutils.get_item_pointer(  # type: ignore[no-untyped-call]
            context, builder, sig.args[0], array, [context.get_constant(types.intp, 0)]
        )
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", first, one, "monotonic")

    return signature, codegen


@intrinsic
def _prefetch(typingctx, buf, pos):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """A hint to the CPU to start loading the cache line of ``buf[pos]`` (LLVM's prefetch, for
    reading, kept in all cache levels): nothing is read or written, and no position faults, but
    callers keep ``pos`` inside ``buf``. ``buf`` is a 1-D uint8 array."""
    signature = types.void(buf, pos)

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        array = context.make_array(sig.args[0])(context, builder, args[0])
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(  # type: ignore[no-untyped-call]
            builder.module,
            ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32]),
            "llvm.prefetch.p0i8",
        )
        item = cgutils.get_item_pointer(  # type: ignore[no-untyped-call]  # as ``_take_next``
            context, builder, sig.args[0], array, [args[1]]
        )
        address = builder.bitcast(item, byte_pointer)
        builder.call(hint, [address, i32(0), i32(3), i32(1)])  # read, keep, data cache
        return context.get_dummy_value()

    return signature, codegen


prefetch = cast(Callable[[U8, int], None], _prefetch)  # typed for mypy
take_next = cast(Callable[[npt.NDArray[np.int64]], int], _take_next)  # typed for mypy
# ``for _worker in numba.prange(WORKERS)`` around ``for p in in_turn(taken, parts)``: numba
# cuts the range into one block per worker thread, so each worker gets an iteration (up to this
# many workers), and each iteration takes parts until none is left (the other iterations find
# none: an atomic add each). In fixed blocks of parts, a worker slowed down (its core shared
# with another thread or process) held up the kernel: every parallel pass over parts or chunks
# takes them so (the TCP analysis's: see ``tcp.grouping.CHUNKS_PER_THREAD``).
WORKERS = 256


# not cached, unlike the kernels: numba registers a generator's implementation only when it
# compiles it, so a kernel compiled after loading a cached copy could not use it. The kernels
# that use it keep its machine code in their own cache entries.
@numba.njit(nogil=True)
def in_turn(taken, parts):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The parts ``0 .. parts - 1`` a worker takes one at a time, each the next one no worker
    took yet (``take_next`` on ``taken``, a zeroed 1-element int64 array shared by the
    workers of one kernel call)."""
    while True:
        p = take_next(taken)
        if p >= parts:
            return
        yield p


@kernel
def byte(b: U8, pos: int) -> int:
    """The byte at ``pos`` as a signed 64-bit integer.

    Not ``int(b[pos])``: numba types that as uint64, and uint64 mixed with int64 is float64.
    The index is unsigned (callers checked ``0 <= pos < len(b)``): a signed one makes numba
    wrap negative indices around, a select per byte that keeps LLVM from merging the byte
    reads of ``read_u16``/``read_u32`` into one load (decode: 45 -> 35 ns of CPU per packet).
    """
    return np.int64(b[np.uint64(pos)])  # type: ignore[return-value]  # an int to numba


@kernel
def read_u16(b: U8, pos: int, big: bool) -> int:
    """Unsigned 16-bit integer at ``pos`` in the given byte order (caller checked the bounds)."""
    if big:
        return (byte(b, pos) << 8) | byte(b, pos + 1)
    return (byte(b, pos + 1) << 8) | byte(b, pos)


@kernel
def read_u32(b: U8, pos: int, big: bool) -> int:
    """Unsigned 32-bit integer at ``pos`` in the given byte order (caller checked the bounds)."""
    if big:
        return (read_u16(b, pos, True) << 16) | read_u16(b, pos + 2, True)
    return (read_u16(b, pos + 2, False) << 16) | read_u16(b, pos, False)
