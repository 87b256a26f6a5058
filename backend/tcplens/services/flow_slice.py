"""One flow's packets as a capture file of their own: what the browser's Wireshark (Wiregasm) opens
to show a flow, instead of the whole capture.

The flow's frame numbers come from its series (the analysis stored every segment's frame); the
slice is cut from the original file on request, decompressed as the reader does (gzip, zstd), in
the file's own format so that nothing is converted and nothing lost:

- pcap (draft-ietf-opsawg-pcap): the 24-byte file header (link type, snapshot length, µs or ns
  timestamps, byte order) and the flow's records, each copied byte for byte;
- pcapng (draft-ietf-opsawg-pcapng): every Section Header (its section length set to -1,
  "unknown", §4.1: the sections are shorter now), Interface Description, Name Resolution and
  Decryption Secrets block, so that each packet block keeps its interface (link type, timestamp
  resolution and offset) and TLS secrets still apply, and the flow's packet blocks (EPB, SPB, the
  obsolete PB), byte for byte. Frames are counted over exactly the blocks the reader counts
  (capture/pcapng.py), which are Wireshark's frames.

A frame is in the slice when its number is; the walk stops after the flow's last frame, at the
first record it cannot walk (the reader stopped there too), or when the slice reaches
``MAX_SLICE_BYTES``. Only the flow's first ``MAX_SLICE_FRAMES`` frames are asked for, so the
slice holds a prefix of the flow's frames: frame ``k`` of the slice is the ``k``-th of
``flow_frames`` (the browser maps its numbers back to the capture's with that list).

The walk is per record in Python (a few hundred ns each): it serves one request, from a file the
upload limit bounds, and is not part of the analysis.
"""

from __future__ import annotations

import io
import mmap
import struct
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from tcplens.capture.compression import HEAD_BYTES, BoundedStream, sniff_format
from tcplens.capture.errors import CaptureError
from tcplens.capture.formats import EPB, IDB, MIN_BLOCK, OPB, SHB, SPB
from tcplens.db.captures import Flow
from tcplens.errors import NotFound
from tcplens.storage.blobs import BlobNotFoundError
from tcplens.storage.series import DIRECTIONS, SeriesFiles

MAX_SLICE_FRAMES = 200_000  # the flow's first frames a slice holds at most
MAX_SLICE_BYTES = 128 << 20  # and its size at most (the browser holds it twice)
READ_STEP = 4 << 20  # decompressed bytes read from the capture at a time
MAX_RECORD = 1 << 24  # a record or block longer than this ends the walk (the reader's bound)

NRB = 0x00000004  # Name Resolution Block (pcapng §4.5)
DSB = 0x0000000A  # Decryption Secrets Block (pcapng §4.7)
_KEPT_BLOCKS = (SHB, IDB, NRB, DSB)
_PACKET_BLOCKS = (EPB, SPB, OPB)
_PCAP_RECORD = 16
_PCAP_HEADER = 24


class SliceUnavailable(NotFound):
    code = "flow_slice_unavailable"


@dataclass(frozen=True)
class FlowSlice:
    """The slice: its bytes in ``file`` (at position 0), how many frames it holds (the first
    ``frames`` of the flow's), and how many the flow has."""

    file: IO[bytes]
    size: int
    frames: int
    flow_frames: int
    format: str  # "pcap" or "pcapng"


@dataclass(frozen=True)
class FlowFrames:
    """The flow's frame numbers (the capture's, from 1), ascending, and the time of the first
    in seconds from the capture's start (the origin of the graphs and of every ``*_s``)."""

    numbers: npt.NDArray[np.int64]
    start_s: float | None


def flow_frames(files: SeriesFiles, flow: Flow) -> FlowFrames:
    key = flow.series_keys.get("key")
    numbers, times = [], []
    for direction in DIRECTIONS:
        span = flow.series_keys.get(direction)
        if key is None or span is None:
            continue
        try:
            rows = files.rows(str(key), int(span[0]), int(span[1]))
        except BlobNotFoundError as exc:
            raise SliceUnavailable("the series of this flow are gone") from exc
        numbers.append(rows.column("frame").to_numpy().astype(np.int64))
        times.append(rows.column("time_s").to_numpy())
    if not numbers or not sum(len(n) for n in numbers):
        return FlowFrames(np.empty(0, np.int64), None)
    frames, time_s = np.concatenate(numbers), np.concatenate(times)
    return FlowFrames(np.unique(frames), float(time_s[np.argmin(frames)]))


def cut_slice(
    source: IO[bytes],
    frames: npt.NDArray[np.int64],
    out: IO[bytes],
    *,
    max_frames: int = MAX_SLICE_FRAMES,
    max_bytes: int = MAX_SLICE_BYTES,
) -> FlowSlice:
    """Write the capture's records of ``frames`` (ascending; the first ``max_frames`` of them,
    as long as the slice stays within ``max_bytes``) from ``source`` (the stored file, maybe
    compressed) to ``out``."""
    if not frames.size:
        raise SliceUnavailable("the flow has no packets")
    head = source.read(HEAD_BYTES)
    kind = sniff_format(head)
    if kind is None:
        raise SliceUnavailable("the capture file is not a pcap or pcapng file")
    compression = kind if kind in ("gzip", "zstd") else None
    wanted = frames[:max_frames].tolist()
    mapped = None if compression else _mapped(source)
    try:
        if mapped is not None:
            reader = _Chunks(None, mapped)
        else:
            stream = BoundedStream(_Again(head, source), compression, None, head)  # type: ignore[arg-type]
            reader = _Chunks(stream)
        inner = "pcapng" if reader.peek(4) == b"\x0a\x0d\x0d\x0a" else "pcap"
        walk = _walk_pcapng if inner == "pcapng" else _walk_pcap
        written = walk(reader, wanted, out, max_bytes)
    except CaptureError as exc:
        raise SliceUnavailable(f"the capture file could not be read: {exc}") from exc
    finally:
        if mapped is not None:
            mapped.close()
    size = out.tell()
    out.seek(0)
    return FlowSlice(out, size, written, int(frames.size), inner)


def _mapped(source: IO[bytes]) -> mmap.mmap | None:
    """The source file mapped read-only, if it is a local file (an S3 body is not)."""
    try:
        return mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ)
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


class _Chunks:
    """The decompressed capture as a window of bytes: ``buf[pos:fill]`` is what comes next;
    ``pos`` may run past ``fill`` (a record skipped before it was read). A local uncompressed
    file is mapped, not read (``data``): skipping a record then costs nothing."""

    def __init__(self, stream: Any, data: Any = None) -> None:
        self._stream = stream
        self.buf: Any = bytearray(READ_STEP) if data is None else data
        self.fill = 0 if data is None else len(data)
        self.pos = 0
        self._eof = data is not None

    def peek(self, n: int) -> bytes:
        self.need(n)
        return bytes(self.buf[self.pos : self.pos + n])

    def need(self, n: int) -> bool:
        """Whether ``n`` bytes from ``pos`` are in ``buf`` (reading more if not)."""
        while self.fill - self.pos < n and not self._eof:
            rest = max(0, self.fill - self.pos)
            skip = max(0, self.pos - self.fill)
            if len(self.buf) < n:
                grown = bytearray(max(n, 2 * len(self.buf)))
                grown[:rest] = self.buf[self.pos : self.fill]
                self.buf = grown
            else:
                self.buf[:rest] = self.buf[self.pos : self.fill]
            with memoryview(self.buf) as view:
                got = self._stream.readinto(view[rest:])
            if not got:
                self._eof = True
            self.fill = rest + got
            self.pos = skip  # (past ``fill`` while a skipped record goes on)
        return self.fill - self.pos >= n


class _Again(io.RawIOBase):
    """The stored file with its sniffed head put back in front (any object with ``read``: a
    local file or an S3 body)."""

    def __init__(self, head: bytes, rest: IO[bytes]) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, view: Any) -> int:
        if self._head:
            k = min(len(view), len(self._head))
            view[:k] = self._head[:k]
            self._head = self._head[k:]
            return k
        readinto = getattr(self._rest, "readinto", None)
        if readinto is not None:
            return int(readinto(view) or 0)
        data = self._rest.read(len(view))
        view[: len(data)] = data
        return len(data)


def _walk_pcap(reader: _Chunks, wanted: list[int], out: IO[bytes], max_bytes: int) -> int:
    if not reader.need(_PCAP_HEADER):
        return 0
    header = bytes(reader.buf[reader.pos : reader.pos + _PCAP_HEADER])
    big = header[:4] in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d")
    length_at = struct.Struct(">I" if big else "<I").unpack_from
    out.write(header)
    size = _PCAP_HEADER
    frame = written = 0
    target = wanted[0]
    # the loop of the walk, on local names: it runs once per record of the capture
    buf, pos, end = reader.buf, reader.pos + _PCAP_HEADER, reader.fill
    while True:
        if end - pos < _PCAP_RECORD:
            reader.pos = pos
            if not reader.need(_PCAP_RECORD):
                break
            buf, pos, end = reader.buf, reader.pos, reader.fill
        (incl,) = length_at(buf, pos + 8)
        if incl > MAX_RECORD:
            break
        total = _PCAP_RECORD + incl
        frame += 1
        if frame == target:
            if end - pos < total:
                reader.pos = pos
                if not reader.need(total):
                    break
                buf, pos, end = reader.buf, reader.pos, reader.fill
            if size + total > max_bytes:
                break
            out.write(buf[pos : pos + total])
            size += total
            written += 1
            if written == len(wanted):
                break
            target = wanted[written]
        pos += total
    return written


def _walk_pcapng(reader: _Chunks, wanted: list[int], out: IO[bytes], max_bytes: int) -> int:
    frame = written = size = 0
    target = wanted[0]
    orders = {False: struct.Struct("<II").unpack_from, True: struct.Struct(">II").unpack_from}
    block_at = orders[False]
    buf, pos, end = reader.buf, reader.pos, reader.fill
    while True:
        if end - pos < MIN_BLOCK + 4:  # a block's type, length and (SHB) byte-order magic
            reader.pos = pos
            if not reader.need(MIN_BLOCK):
                break
            buf, pos, end = reader.buf, reader.pos, reader.fill
        if buf[pos : pos + 4] == b"\x0a\x0d\x0d\x0a":  # a section: its magic gives the order
            if end - pos < MIN_BLOCK + 4:
                break
            block_at = orders[buf[pos + 8 : pos + 12] == b"\x1a\x2b\x3c\x4d"]
        block_type, length = block_at(buf, pos)
        if length < MIN_BLOCK or length % 4 or length > MAX_RECORD:
            break
        keep = block_type in _KEPT_BLOCKS
        if block_type in _PACKET_BLOCKS:
            frame += 1
            keep = frame == target
        if keep:
            if end - pos < length:
                reader.pos = pos
                if not reader.need(length):
                    break
                buf, pos, end = reader.buf, reader.pos, reader.fill
            if size + length > max_bytes:
                break
            block = bytearray(buf[pos : pos + length])
            if block_type == SHB and length >= 24:
                block[16:24] = b"\xff" * 8  # section length: unknown (pcapng §4.1)
            out.write(block)
            size += length
            if block_type in _PACKET_BLOCKS:
                written += 1
                if written == len(wanted):
                    break
                target = wanted[written]
        pos += length
    return written
