"""The window of capture bytes the compiled passes see, over a mapped file or over a stream.

Both kinds move forward only. ``MappedBuffer`` (an uncompressed regular file) maps the file and
moves a window over it without copying, dropping the pages behind it from the process so resident
memory stays the table plus one window. ``StreamBuffer`` (gzip/zstd, pipes, uploads) reads into
one reusable array, moving the unfinished record to the front before each read.
"""

from __future__ import annotations

import contextlib
import mmap
from abc import ABC, abstractmethod
from typing import BinaryIO, Protocol

import numpy as np

from tcplens.capture.compression import BoundedStream
from tcplens.capture.memory import drop_range
from tcplens.capture.table import U8

WINDOW = 8 << 20  # bytes of a mapped file walked at a time
STREAM_BUFFER = 8 << 20  # bytes read from a stream at a time
MAX_HELD = 16 << 20  # the largest single block held whole (packets are ≤ 256 KiB + options)


class CaptureBuffer(ABC):
    """``buf[:fill]`` holds the bytes from stream offset ``base``; ``eof``: nothing follows."""

    buf: U8
    fill: int = 0
    base: int = 0
    eof: bool = False
    compression: str | None = None
    source_size: int = 0  # bytes of the source as the caller has it (compressed); 0: not known

    @abstractmethod
    def advance(self, pos: int, needed: int) -> None:
        """Make ``buf`` start at the current ``buf[pos]`` and hold ≥ ``needed`` bytes if any."""

    @abstractmethod
    def skip(self, pos: int, length: int) -> bool:
        """Continue after ``length`` bytes from ``pos``; False if the data ends before that."""

    def close(self) -> None:  # noqa: B027 (optional: a stream buffer holds nothing to release)
        """Release the file mapping or the buffer."""

    def release_before(self, offset: int) -> None:  # noqa: B027 (optional, as close)
        """Bytes before stream offset ``offset`` are read: a mapping may drop their pages."""

    @property
    def problem(self) -> str | None:
        """Why the bytes ended early (a cut or corrupt compressed stream), if they did."""
        return None

    def source_done(self, pos: int) -> int:
        """Bytes of the source (compressed, if it is) behind ``buf[pos]``, for progress."""
        return self.base + pos


class Consumed(Protocol):
    """A raw stream that counts the bytes taken from it (``source._Prefixed``)."""

    consumed: int


class MappedBuffer(CaptureBuffer):
    def __init__(self, file: BinaryIO, size: int) -> None:
        self.size = self.source_size = size
        self._map = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        self.whole: U8 = np.frombuffer(self._map, np.uint8)
        self._address = self.whole.ctypes.data
        self._released = 0  # pages before this offset were dropped from the process
        self._window(0, 0)

    def _window(self, base: int, needed: int) -> None:
        self.base = base
        end = min(self.size, base + max(WINDOW, needed))
        self.buf = self.whole[base:end]
        self.fill = end - base
        self.eof = end == self.size

    def release_before(self, offset: int) -> None:
        """Drop the mapped pages before ``offset``: read already, they need not stay resident.

        Without holding the GIL (a helper thread may call it while the decoding runs).
        """
        aligned = offset - offset % mmap.PAGESIZE
        if aligned > self._released:
            drop_range(self._address + self._released, aligned - self._released)
            self._released = aligned

    def widen(self) -> None:
        """Make the window the rest of the file (for a walk that needs no count first)."""
        self._window(self.base, self.size)

    def advance(self, pos: int, needed: int) -> None:
        self.release_before(self.base + pos)
        self._window(self.base + pos, needed)

    def skip(self, pos: int, length: int) -> bool:
        target = self.base + pos + length
        if target > self.size:
            self._window(self.size, 0)
            return False
        self.advance(pos + length, 0)
        return True

    def close(self) -> None:
        del self.buf, self.whole
        # a view still held by an exception's traceback keeps the map open; it is freed with it
        with contextlib.suppress(BufferError):
            self._map.close()


class StreamBuffer(CaptureBuffer):
    def __init__(self, stream: BoundedStream, source: Consumed, source_size: int = 0) -> None:
        self.stream = stream
        self.compression = stream.compression
        self.source_size = source_size
        self._source = source
        self.buf = np.empty(STREAM_BUFFER, np.uint8)
        self._read()

    @property
    def problem(self) -> str | None:
        return self.stream.problem

    def source_done(self, pos: int) -> int:
        if self.compression is None:
            return self.base + pos
        # the decompressor's input runs ahead of its output by at most one read
        return self._source.consumed

    def _read(self) -> None:
        want = self.buf.shape[0] - self.fill
        got = self.stream.readinto(self.buf.data[self.fill :])
        self.fill += got
        self.eof = got < want

    def advance(self, pos: int, needed: int) -> None:
        remaining = self.fill - pos
        self.buf[:remaining] = self.buf[pos : self.fill]
        self.base += pos
        self.fill = remaining
        if needed > self.buf.shape[0]:
            grown = np.empty(needed, np.uint8)
            grown[:remaining] = self.buf[:remaining]
            self.buf = grown
        if not self.eof:
            self._read()

    def skip(self, pos: int, length: int) -> bool:
        to_drop = length - (self.fill - pos)
        self.base += self.fill
        self.fill = 0
        while to_drop > 0 and not self.eof:
            view = self.buf.data[: min(to_drop, self.buf.shape[0])]
            got = self.stream.readinto(view)
            self.eof = got < len(view)
            self.base += got
            to_drop -= got
        if to_drop > 0:
            return False
        if not self.eof:
            self._read()
        return True
