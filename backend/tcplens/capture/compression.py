"""Recognising a capture by its first bytes, and undoing gzip/zstd as a bounded stream.

The format is decided by magic bytes, never by the file name: users rename files, and browsers
add ``.txt``. Decompression is streamed into the reader's buffer; the decompressed size is bounded
(``max_bytes``) so a small "zip bomb" cannot exhaust memory.
"""

from __future__ import annotations

import contextlib
import zlib
from typing import Any, BinaryIO, Protocol, cast

from tcplens.capture.errors import CaptureReadError, CaptureTooLargeError, CompressionError

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"  # RFC 8878 §3.1.1
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"  # Section Header Block type, a palindrome (pcapng §4.1)
# libpcap savefile magics: µs and ns resolution, written by a little- or big-endian host
PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")

DEFAULT_MAX_BYTES = 4 << 30  # the default bound on a (decompressed) capture: 4 GiB
SNIFF_BYTES = 4  # how many leading bytes ``sniff_format`` needs
STEP = 1 << 18  # bytes asked of a decompressor at a time
HEAD_BYTES = 18  # read before opening: the longest zstd frame header (RFC 8878 §3.1.1.1)


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


class GzipMembers:
    """gzip (RFC 1952) members one after the other, decompressed with a bound on each step.

    Not ``gzip.GzipFile``: at a cut it raises and drops the bytes it had decompressed in that
    call, and it cannot say how far it got. ``zlib`` hands out what it has.
    """

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._member: Any = None  # zlib decompressor of the current member; None between members
        self._pending = b""
        self.cut = False  # the input ended inside a member

    def readinto(self, view: memoryview) -> int:
        while True:
            if not self._pending:
                self._pending = self._raw.read(1 << 16)
                if not self._pending:
                    self.cut = self._member is not None
                    return 0
            if self._member is None:
                self._pending = self._pending.lstrip(b"\x00")  # zero padding after a member
                if not self._pending:
                    continue
                self._member = zlib.decompressobj(16 + zlib.MAX_WBITS)
            out = self._member.decompress(self._pending, len(view))
            if self._member.eof:
                self._pending = self._member.unused_data
                self._member = None
            else:
                self._pending = self._member.unconsumed_tail
            if out:
                view[: len(out)] = out
                return len(out)


class BoundedStream:
    """The (decompressed) bytes of a source, read into caller-owned memory, at most ``max_bytes``.

    A compressed stream that ends early, or turns corrupt after some bytes, is not an error here:
    the bytes before are delivered and ``problem`` says what happened; the reader keeps the packets
    before it and reports a truncated capture. Corrupt from the first byte is a
    ``CompressionError``.
    """

    def __init__(
        self, raw: BinaryIO, compression: str | None, max_bytes: int | None, head: bytes = b""
    ) -> None:
        self.compression = compression
        self.max_bytes = max_bytes
        self.delivered = 0
        self.problem: str | None = None
        self._eof = False
        self._expected: int | None = None  # zstd: content size of the first frame, if stated
        self._corrupt: tuple[type[BaseException], ...] = ()
        self._gzip: GzipMembers | None = None
        inner: _Readable
        if compression == "gzip":
            inner = self._gzip = GzipMembers(raw)
            self._corrupt = (zlib.error,)
        elif compression == "zstd":
            import zstandard  # imported here: only compressed uploads pay for it

            self._corrupt = (zstandard.ZstdError,)
            # python-zstandard's reader ends silently on a cut frame; the frame header's content
            # size (written by `zstd FILE`) lets us notice
            with contextlib.suppress(zstandard.ZstdError):
                size = zstandard.get_frame_parameters(head).content_size
                if 0 < size < zstandard.CONTENTSIZE_UNKNOWN:
                    self._expected = size
            # 128 MiB window, the zstd default limit: bounds the decompressor's own memory
            inner = zstandard.ZstdDecompressor(max_window_size=1 << 27).stream_reader(
                raw, read_across_frames=True, closefd=False
            )
        else:
            inner = cast(_Readable, raw)
        self._inner = inner

    def readinto(self, view: memoryview) -> int:
        """Fill ``view`` as far as the stream allows; less than asked only at its end."""
        total = 0
        while total < len(view) and not self._eof:
            try:
                # small steps: a decompressor that fails loses at most one step's bytes
                got = self._inner.readinto(view[total : total + STEP])
            except self._corrupt as exc:
                if self.delivered + total == 0:
                    raise CompressionError(
                        f"The {self.compression} stream is corrupt: {exc}."
                    ) from exc
                self.problem = f"The {self.compression} stream is corrupt after this point ({exc})"
                got = 0
            except OSError as exc:
                raise CaptureReadError(f"The capture could not be read: {exc}.") from exc
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
        cut = self._gzip is not None and self._gzip.cut
        if self._eof and self._expected is not None and self.delivered < self._expected:
            cut = True
        if cut and self.problem is None:
            self.problem = f"The {self.compression} stream ends early"
        return total
