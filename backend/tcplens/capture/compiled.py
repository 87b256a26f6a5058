"""The one way the reader compiles its per-packet kernels: numba, cached on disk.

Kernels are the only place a loop runs per packet (CONVENTIONS: never in Python). ``cache=True``
stores the machine code in ``__pycache__`` next to the source, so a process pays only the load
(~0.2 s) and not the compilation. Importing this module imports numba, so the reader imports the
kernel modules lazily, inside ``read_capture``.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar, cast

import numba
import numpy as np

from tcplens.capture.table import U8

F = TypeVar("F", bound=Callable[..., object])

_PACKAGE = Path(__file__).resolve().parent
_KERNEL_MODULES = ("compiled", "link", "decode", "pcap", "pcapng", "dns", "records", "table")


def _drop_stale_kernel_cache() -> None:
    """Delete cached kernels compiled from other versions of the kernel modules.

    numba keys a cached kernel on its own file's timestamp only, but our kernels inline kernels
    from other modules (``read_u32``, ``skip_link_header``): after a change there, numba would
    load stale machine code. So the cache is tagged with a digest of all kernel sources.
    """
    digest = hashlib.sha256()
    for name in _KERNEL_MODULES:
        digest.update((_PACKAGE / f"{name}.py").read_bytes())
    cache = _PACKAGE / "__pycache__"
    tag = cache / "kernels.sha256"
    try:
        if tag.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    with contextlib.suppress(OSError):
        cache.mkdir(exist_ok=True)
        for stale in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            stale.unlink(missing_ok=True)
        tag.write_text(digest.hexdigest())


_drop_stale_kernel_cache()


def kernel(function: F) -> F:
    """Compile ``function`` in nopython mode, cached; typed as the function itself for mypy."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


def inline_kernel(function: F) -> F:
    """A kernel numba inlines into its callers (``inline="always"``), for helpers taking arrays.

    A call to a compiled function passes each array as a struct and increments and decrements
    its reference count (atomic operations); for the TCP options parser that was half the decode
    time. Inlined, the caller sees the arrays directly.
    """
    return cast(F, numba.njit(cache=True, nogil=True, inline="always")(function))


@kernel
def byte(b: U8, pos: int) -> int:
    """The byte at ``pos`` as a signed 64-bit integer.

    Not ``int(b[pos])``: numba types that as uint64, and uint64 mixed with int64 is float64.
    """
    return np.int64(b[pos])  # type: ignore[return-value]  # numpy int64 is an int to numba


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
