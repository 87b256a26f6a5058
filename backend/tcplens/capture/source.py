"""Opening what the caller gave us (a path or a binary stream) as a ``CaptureBuffer``."""

from __future__ import annotations

import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from tcplens.capture.buffers import CaptureBuffer, MappedBuffer, StreamBuffer
from tcplens.capture.compression import HEAD_BYTES, BoundedStream, sniff_format
from tcplens.capture.errors import CaptureReadError, CaptureTooLargeError, NotACaptureError


class _Prefixed(io.RawIOBase):
    """A stream whose first bytes were already read to sniff it; gives them back first."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest
        self.consumed = 0  # bytes given out, the head included: how far into the source we are

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self._head:
            k = min(len(buffer), len(self._head))
            buffer[:k] = self._head[:k]
            self._head = self._head[k:]
            self.consumed += k
            return k
        readinto = getattr(self._rest, "readinto", None)
        if readinto is not None:
            got = int(readinto(buffer) or 0)
        else:
            data = self._rest.read(len(buffer))
            got = len(data)
            buffer[:got] = data
        self.consumed += got
        return got


def _read_head(stream: BinaryIO) -> bytes:
    head = b""
    while len(head) < HEAD_BYTES:
        more = stream.read(HEAD_BYTES - len(head))
        if not more:
            break
        head += more
    return head


def _sniff(head: bytes) -> str:
    kind = sniff_format(head)
    if kind is None:
        if not head:
            raise NotACaptureError("The file is empty.")
        raise NotACaptureError("The file is not a packet capture (neither pcap nor pcapng).")
    return kind


@contextmanager
def open_capture(
    source: str | os.PathLike[str] | BinaryIO, max_bytes: int | None
) -> Iterator[CaptureBuffer]:
    """The (decompressed) bytes of ``source``, bounded by ``max_bytes``.

    A path is opened and closed here (an uncompressed regular file is mapped, not read); a
    stream is read from where it is and left open.
    """
    if not isinstance(source, str | os.PathLike):
        yield _streamed(source, max_bytes, None, _remaining_size(source))
        return
    try:
        file = open(source, "rb", buffering=0)  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise CaptureReadError(f"The capture could not be opened: {exc.strerror}.") from exc
    try:
        info = os.fstat(file.fileno())
        if max_bytes is not None and info.st_size > max_bytes:
            raise CaptureTooLargeError(
                f"The capture is {info.st_size:,} bytes, above the limit of {max_bytes:,} bytes."
            )
        head = _read_head(file)
        kind = _sniff(head)
        if stat.S_ISREG(info.st_mode) and kind in ("pcap", "pcapng"):
            mapped = MappedBuffer(file, info.st_size)
            try:
                yield mapped
            finally:
                mapped.close()
        else:
            size = info.st_size if stat.S_ISREG(info.st_mode) else 0
            yield _streamed(file, max_bytes, head, size)
    finally:
        file.close()


def _remaining_size(stream: BinaryIO) -> int:
    """Bytes from the stream's position to its end if it can seek (a file, BytesIO), else 0."""
    try:
        if not stream.seekable():
            return 0
        here = stream.tell()
        end = stream.seek(0, os.SEEK_END)
        stream.seek(here)
        return max(end - here, 0)
    except (OSError, AttributeError, ValueError):  # io.UnsupportedOperation is both
        return 0


def _streamed(
    stream: BinaryIO, max_bytes: int | None, head: bytes | None, source_size: int
) -> StreamBuffer:
    try:
        if head is None:
            head = _read_head(stream)
        kind = _sniff(head)
        compression = kind if kind in ("gzip", "zstd") else None
        raw = _Prefixed(head, stream)
        bounded = BoundedStream(raw, compression, max_bytes, head)  # type: ignore[arg-type]
        return StreamBuffer(bounded, raw, source_size)
    except OSError as exc:
        raise CaptureReadError(f"The capture could not be read: {exc}.") from exc
