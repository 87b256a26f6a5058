"""Recognising a capture by its first bytes, and undoing gzip/zstd as a bounded stream.

The format is decided by magic bytes, never by the file name: users rename files, and browsers
add ``.txt``. Decompression is streamed into the reader's buffer; the decompressed size is bounded
(``max_bytes``) so a small "zip bomb" cannot exhaust memory.
"""

from __future__ import annotations

import gzip
import zlib
from typing import BinaryIO, Protocol, cast

from tcplens.capture.errors import CaptureReadError, CaptureTooLargeError, CompressionError

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # RFC 8878 §3.1.1
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"  # Section Header Block type, a palindrome (pcapng §4.1)
# libpcap savefile magics: µs and ns resolution, written by a little- or big-endian host
PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")

SNIFF_BYTES = 4  # how many leading bytes ``sniff_format`` needs


def sniff_format(first_bytes: bytes) -> str | None:
    """Name the container from the first bytes: ``pcap``, ``pcapng``, ``gzip``, ``zstd`` or None.

    Cheap and side-effect free, for an upload service to refuse non-captures early.
    A compressed file is named by its compression; what is inside is only known once read.

    >>> sniff_format(b"\\xd4\\xc3\\xb2\\xa1\\x02\\x00")
    'pcap'
    >>> sniff_format(b"GET / HTTP/1.1") is None
    True
    """
    head = bytes(first_bytes[:SNIFF_BYTES])
    if head in PCAP_MAGICS:
        return "pcap"
    if head == PCAPNG_MAGIC:
        return "pcapng"
    if head[:2] == GZIP_MAGIC:
        return "gzip"
    if head == ZSTD_MAGIC:
        return "zstd"
    return None


class _Readable(Protocol):
    def readinto(self, buffer: memoryview, /) -> int | None: ...


class BoundedStream:
    """The (decompressed) bytes of a source, read into caller-owned memory, at most ``max_bytes``.

    A compressed stream that ends early is not an error here: the bytes before the cut are
    delivered and ``cut_short`` says so; the reader then reports a truncated capture.
    """

    def __init__(self, raw: BinaryIO, compression: str | None, max_bytes: int | None) -> None:
        self.compression = compression
        self.max_bytes = max_bytes
        self.delivered = 0
        self.cut_short = False
        self._eof = False
        inner: _Readable
        if compression == "gzip":
            inner = gzip.GzipFile(fileobj=raw, mode="rb")
        elif compression == "zstd":
            import zstandard  # imported here: only compressed uploads pay for it

            # 128 MiB window, the zstd default limit: bounds the decompressor's own memory
            inner = zstandard.ZstdDecompressor(max_window_size=1 << 27).stream_reader(
                raw, read_across_frames=True, closefd=False
            )
        else:
            inner = cast(_Readable, raw)
        self._inner = inner

    def readinto(self, view: memoryview) -> int:
        """Fill ``view`` as far as the stream allows; 0 only at the end of the stream."""
        total = 0
        while total < len(view) and not self._eof:
            try:
                got = self._inner.readinto(view[total:])
            except EOFError:  # gzip: "Compressed file ended before the end-of-stream marker"
                self.cut_short = True
                got = 0
            except (gzip.BadGzipFile, zlib.error) as exc:
                raise CompressionError(f"The gzip stream is corrupt: {exc}.") from exc
            except OSError as exc:
                raise CaptureReadError(f"The capture could not be read: {exc}.") from exc
            except Exception as exc:  # zstandard.ZstdError has no importable base we can name here
                if type(exc).__name__ == "ZstdError":
                    raise CompressionError(f"The zstd stream is corrupt: {exc}.") from exc
                raise
            if not got:
                self._eof = True
                break
            total += got
        self.delivered += total
        if self.max_bytes is not None and self.delivered > self.max_bytes:
            what = "decompressed capture" if self.compression else "capture"
            raise CaptureTooLargeError(
                f"The {what} is larger than the limit of {self.max_bytes:,} bytes."
            )
        return total
