"""Pages in ahead of the decoding and out behind it, on a helper thread, while the decoding runs.

The table's columns are written once each, chunk by chunk (``reader._Reading._decode``). Their
pages were populated all at once before the first chunk (``MADV_POPULATE_WRITE``: 0.10 s of
system time at 5M packets, 280 MB) and the capture's mapped pages dropped after the last one
(``MADV_DONTNEED``: 0.016-0.023 s), both while the decoder's cores waited. Here a helper thread
does both around the decoding instead: it populates chunk ``j``'s rows of every column while the
decoder works ``AHEAD`` chunks behind, and drops the file's pages of the chunks already decoded.
The helper's madvise calls do not hold the GIL, and the decoder's kernel releases it (``nogil``).

Populating just ahead also keeps the freshly zeroed pages in the cache for the decoder's
writes, where pages populated 0.1 s earlier were out of it (the writes then read them back).

bulk_5M, read phase (2 cores, others idle): populate + decode + drop 0.24 s → 0.17 s.

The helper runs only on idle time (``threads.run_only_when_idle``) and nothing waits for it: the
decoder populates the ranges of its next chunk the helper has not started (``ready``) and
first-touches whatever is left.

One rule of the kernel shapes this: a populate or a drop holds the process's ``mmap_lock`` for
reading from start to end, and anything that maps memory (a thread's stack, a large numpy
array, ``anonymous_memory``) needs it for writing, so it waits for the call in progress. The
calls here are per chunk and column (≤ 2 MiB each: a short wait), and the helper is started
after the decoding's scratch arrays are allocated.
"""

from __future__ import annotations

import contextlib
import mmap
import threading
from collections.abc import Sequence
from typing import Any

import numpy.typing as npt

from tcplens.capture.buffers import CaptureBuffer
from tcplens.capture.memory import populate_range, warm_end
from tcplens.capture.records import DecodeChunk
from tcplens.capture.threads import run_normally, run_only_when_idle

# chunks populated ahead of the one being decoded: one is being decoded while the next is
# populated; a second gives the helper slack when a populate is slow (another process's load)
AHEAD = 2


class PagingAhead:
    """Populates the ``columns``' rows of each chunk before the decoder gets to it, and drops
    the ``buffer``'s pages behind the decoded chunks, on a helper thread.

    The decoder calls ``ready(j)`` before decoding chunk ``j`` and ``decoded(offset)`` after
    (``offset``: where in the stream its last record ends), and ``close()`` in any case.
    """

    def __init__(
        self,
        columns: Sequence[npt.NDArray[Any]],
        chunks: Sequence[DecodeChunk],
        buffer: CaptureBuffer,
    ) -> None:
        self._ranges = _chunk_ranges(columns, chunks)
        self._buffer = buffer
        self._slots = threading.Semaphore(AHEAD)
        self._lock = threading.Lock()
        self._behind = 0  # the stream offset before which the file's pages may go
        self._stop = False
        # per chunk, its ranges not taken yet are [_first[j], _last[j]): the helper takes them
        # from the front, a decoder that reached the chunk first from the back (``ready``)
        self._first = [0] * len(chunks)
        self._last = [len(ranges) for ranges in self._ranges]
        self._thread = threading.Thread(target=self._run, name="tcplens-paging", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        run_only_when_idle()  # (see ``threads``)
        for j in range(len(self._ranges)):
            self._slots.acquire()  # the decoder is at most AHEAD chunks behind
            if self._stop:
                return
            with self._lock:
                behind = self._behind
            self._buffer.release_before(behind)
            while (taken := self._take(j, front=True)) is not None:
                populate_range(*taken)

    def ready(self, j: int) -> None:
        """Populate the ranges of chunk ``j`` the helper has not started, on this thread, before
        the decoder's cores get to them (bulk_5M: the decoder waited 0.08-0.13 s of a 0.30-0.45 s
        read for the one helper thread when it waited for it). A range the helper is still on
        is not waited for: the decoder's first touches of its pages meet the helper's (a page
        is faulted in once either way), where a helper starved by the machine's other work
        (``threads.run_only_when_idle``) would hold the decoding up."""
        while (taken := self._take(j, front=False)) is not None:
            with contextlib.suppress(OSError):  # as when the helper fails: first touches do it
                populate_range(*taken)

    def _take(self, j: int, *, front: bool) -> tuple[int, int] | None:
        """A range of chunk ``j`` nobody took yet, from the front or the back, or None."""
        with self._lock:
            if self._first[j] >= self._last[j]:
                return None
            if front:
                self._first[j] += 1
                return self._ranges[j][self._first[j] - 1]
            self._last[j] -= 1
            return self._ranges[j][self._last[j]]

    def decoded(self, offset: int) -> None:
        """The chunk is decoded (chunks are decoded in order): the stream before ``offset`` is read."""
        with self._lock:
            self._behind = max(self._behind, offset)
        self._slots.release()

    def close(self) -> None:
        """Stop the helper (at once if the decoding stopped early) and wait for it: at the
        normal priority again, its call in progress does not wait for the machine's idle time."""
        self._stop = True
        if self._thread.native_id is not None:
            run_normally(self._thread.native_id)
        self._slots.release()
        self._thread.join()


def _chunk_ranges(
    columns: Sequence[npt.NDArray[Any]], chunks: Sequence[DecodeChunk]
) -> list[list[tuple[int, int]]]:
    """Per chunk, the ``(address, nbytes)`` page ranges of its rows in each column that no
    earlier chunk's range covered (a page shared by two chunks is populated with the first)
    and that did not come resident from the ``memory.WarmReserve``."""
    page = mmap.PAGESIZE
    done = [warm_end(column) for column in columns]  # pages made ahead are resident already
    out = []
    for chunk in chunks:
        ranges = []
        for c, column in enumerate(columns):
            address, size = column.ctypes.data, column.itemsize
            lo = max(done[c], (address + chunk.first * size) // page * page)
            hi = -(-(address + chunk.last * size) // page) * page
            if hi > lo:
                ranges.append((lo, hi - lo))
                done[c] = hi
        out.append(ranges)
    return out
