"""How far a read has got, for a caller watching a long one (the web worker's job status).

The reader calls back between windows of compiled work, never per packet, and a bounded number
of times: at most once per 1% of the source and per 8 MiB, whichever is larger, then once at the
end with ``(total, total)``. Bytes are counted in the source as the caller has it: the file's
bytes for pcap/pcapng, the compressed bytes for gzip/zstd.
"""

from __future__ import annotations

from collections.abc import Callable

ProgressCallback = Callable[[int, int], None]  # (bytes_done, bytes_total); total 0: not known

MIN_STEP = 8 << 20  # bytes between two calls, at least
STEPS = 100  # calls over a source of known size, at most (+ the final one)


class ReadProgress:
    """Throttles ``callback`` to the steps above; does nothing without a callback."""

    def __init__(self, callback: ProgressCallback | None, total: int) -> None:
        self._callback = callback
        self.total = max(total, 0)
        self._step = max(MIN_STEP, self.total // STEPS)
        self._next = self._step
        self._last = 0

    def update(self, done: int) -> None:
        """``done`` bytes of the source are behind the reader; report if a step was crossed."""
        if self._callback is None or done < self._next:
            return
        if self.total:
            done = min(done, self.total)  # a file that grew while read: never past 100%
        self._next = done + self._step
        self._last = done
        self._callback(done, self.total)

    def finish(self, done: int) -> None:
        """The read is over: ``(total, total)``, the total being ``done`` if it was not known."""
        if self._callback is None:
            return
        if self.total and self._last == self.total:
            return  # the last window's call was already (total, total)
        total = self.total or max(done, self._last)
        self._callback(total, total)
