"""The block walk of a mapped pcapng file, on all cores where the file lets it, exactly as the
serial walk (``pcapng.walk_pcapng_blocks``) would find it.

After the section header and interface blocks, a capture is a long run of packet blocks that
change nothing in the walk's state. That run is cut into parts walked on all cores, like a
pcap's (``pcap_walk``): each part starts at a block found near its cut (4-byte aligned with the
first packet block, and a chain of blocks whose lengths, checked at both ends, lead from one to
the next: pcapng §3.1), and part ``k``'s walk must end exactly where part ``k + 1`` starts.
A part stops where the serial walk's state would change or where it would stop or note
something: a section header, an interface, a simple packet block (its timestamp is the previous
packet's), a packet comment, any check that fails. From the first such place, or from a join
that fails, the serial walk reads the rest of the file, so the result is the serial walk's in
every case; only files that need it are read serially.

Nothing is written per packet by the walk: each part keeps the position of one packet block in
``mark_every``; the records' columns are filled chunk by chunk from those marks, on all cores,
just before the chunk is decoded (``PcapngWalk.fill``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from tcplens.capture.compiled import (
    inline_kernel,
    kernel,
    parallel_kernel,
    prefetch,
    read_u16,
    read_u32,
)
from tcplens.capture.formats import EPB, IDB, MIN_BLOCK, OPB, SHB, SPB
from tcplens.capture.pcap_walk import MIN_PART_BYTES, PARTS_PER_THREAD, PREFETCH_RECORDS
from tcplens.capture.pcapng import OPT_COMMENT, OPT_END, units_to_ns
from tcplens.capture.records import MAX_RECORD, DecodeChunk, chunks_from_marks, joined_marks
from tcplens.capture.table import I64, U8, U16, U32

MARK_EVERY = 16384  # packet blocks between two kept positions
CHAIN = 8  # consecutive well-formed blocks that make a guessed block start
# the search for a block start after a cut: a packet block is at most this long (its captured
# bytes ≤ MAX_RECORD, with a generous allowance for options), longer searches read garbage
SEARCH = MAX_RECORD + (1 << 16)
_REACHED = -1  # a part's walk got to its limit (the next part's start)
_SERIAL = -2  # a part's walk stopped at a block only the serial walk reads


@inline_kernel
def _has_comment(buf: U8, pos: int, stop: int, big: bool) -> bool:
    """A comment among the options in ``buf[pos:stop]`` (the walk of ``pcapng.scan_options``)."""
    while stop - pos >= 4:
        code = read_u16(buf, pos, big)
        length = read_u16(buf, pos + 2, big)
        if code == OPT_END or stop - pos - 4 < length:
            return False
        if code == OPT_COMMENT:
            return True
        pos += 4 + ((length + 3) & ~3)
    return False


@inline_kernel
def _plain_block(
    buf: U8, pos: int, end: int, big: bool, section_base: int, interfaces: int
) -> tuple[int, bool]:
    """The length of the block at ``pos`` and whether it is a packet, if the serial walk would
    read it without changing its state, stopping or noting anything; else length -1."""
    if end - pos < MIN_BLOCK:
        return -1, False
    block_type = read_u32(buf, pos, big)
    if block_type in (SHB, IDB, SPB):
        return -1, False
    length = read_u32(buf, pos + 4, big)
    if length < MIN_BLOCK or length % 4 != 0 or end - pos < length:
        return -1, False
    if read_u32(buf, pos + length - 4, big) != length:
        return -1, False
    if block_type != EPB and block_type != OPB:
        return length, False
    if length < 32:
        return -1, False
    local = read_u32(buf, pos + 8, big) if block_type == EPB else read_u16(buf, pos + 8, big)
    if section_base + local >= interfaces:
        return -1, False
    captured = read_u32(buf, pos + 20, big)
    if captured > MAX_RECORD or captured > length - 32:
        return -1, False
    if _has_comment(buf, pos + 28 + ((captured + 3) & ~3), pos + length - 4, big):
        return -1, False
    return length, True


@kernel
def find_block_start(buf: U8, lo: int, hi: int, end: int, big: bool, align: int) -> int:
    """The first position in ``[lo, hi)``, ≡ ``align`` mod 4, where ``CHAIN`` well-formed
    blocks follow each other (or reach exactly ``end``); -1 if none. A guess, verified by the
    walk."""
    first = lo + (align - lo) % 4
    for p in range(first, hi, 4):
        q = p
        for _ in range(CHAIN):
            if q == end:
                break
            if end - q < MIN_BLOCK:
                q = -1
                break
            length = read_u32(buf, q + 4, big)
            if (
                length < MIN_BLOCK
                or length % 4 != 0
                or end - q < length
                or read_u32(buf, q + length - 4, big) != length
            ):
                q = -1
                break
            q += length
        if q >= 0:
            return p
    return -1


@parallel_kernel
def walk_pcapng_parts(
    buf: U8, starts: I64, limits: I64, end: int, big: bool, section_base: int, interfaces: int,
    every: int, counts: I64, ends: I64, stops: I64, marks: I64,
) -> None:  # fmt: skip
    """Walk part ``k`` from ``starts[k]`` while before ``limits[k]``, on all cores: its packet
    count, where it stopped and why (``_REACHED`` or ``_SERIAL``), and the position of its
    packet blocks ``0, every, 2 * every…`` in ``marks[k]``. Each block asks for the bytes
    ``PREFETCH_RECORDS`` blocks of its size ahead, as ``pcap_walk.walk_parts`` (bulk_5M as
    pcapng over mapped pages, medians of 15: 34-45 -> 24-30 ms)."""
    for k in numba.prange(starts.shape[0]):
        pos = starts[k]
        limit = limits[k]
        n = 0
        stop = _REACHED
        left = 0  # packets before the next mark
        while pos < limit:
            length, packet = _plain_block(buf, pos, end, big, section_base, interfaces)
            if length < 0:
                stop = _SERIAL
                break
            prefetch(buf, min(pos + PREFETCH_RECORDS * length, end - 1))
            if packet:
                if left == 0:
                    marks[k, n // every] = pos
                    left = every
                left -= 1
                n += 1
            pos += length
        counts[k] = n
        ends[k] = pos
        stops[k] = stop


@parallel_kernel
def fill_pcapng_parts(
    buf: U8, part_first: I64, part_pos: I64, big: bool, section_base: int,
    if_tsresol: I64, if_tsoffset: I64,
    data_offset: I64, caplen: U32, origlen: U32, ts_ns: I64, interface: U16,
) -> None:  # fmt: skip
    """The records' columns of rows ``part_first[p]`` to ``part_first[p + 1]``, part ``p``
    starting at the packet block at ``part_pos[p]`` (blocks the walk checked): what the serial
    walk writes for an EPB or OPB."""
    for p in numba.prange(part_first.shape[0] - 1):
        pos = part_pos[p]
        for i in range(part_first[p], part_first[p + 1]):
            block_type = read_u32(buf, pos, big)
            while block_type != EPB and block_type != OPB:  # a block the reader skips
                pos += read_u32(buf, pos + 4, big)
                block_type = read_u32(buf, pos, big)
            if block_type == EPB:
                local = read_u32(buf, pos + 8, big)
            else:
                local = read_u16(buf, pos + 8, big)
            k = section_base + local
            units = (read_u32(buf, pos + 12, big) << 32) | read_u32(buf, pos + 16, big)
            data_offset[i] = pos + 28
            caplen[i] = read_u32(buf, pos + 20, big)
            origlen[i] = read_u32(buf, pos + 24, big)
            ts_ns[i] = units_to_ns(units, if_tsresol[k]) + if_tsoffset[k] * 1_000_000_000
            interface[i] = k
            pos += read_u32(buf, pos + 4, big)


@dataclass
class PcapngWalk:
    """The packet blocks of a mapped pcapng's run walked on all cores: ``rows`` packets from
    ``start``; the serial walk takes over at ``pos`` (the file's end, or where a part stopped
    or a join failed). ``mark_row``/``mark_pos``: row and position of a packet block, every ≤
    ``mark_every`` rows (``mark_row`` ends with ``rows``). The walk's section (byte order, first
    interface) and interfaces are the serial walk's state at ``start``, the same all along."""

    start: int
    rows: int
    pos: int
    mark_row: I64
    mark_pos: I64
    big: bool
    section_base: int
    if_tsresol: I64
    if_tsoffset: I64

    def chunks(self, rows: int, out: I64, chunk_rows: int, parts: int) -> list[DecodeChunk]:
        """Chunks of ≤ ``chunk_rows`` rows starting at marks, in parts from mark to mark;
        ``offsets`` is filled by ``fill`` (``parts`` is not used)."""
        return chunks_from_marks(self.mark_row, self.mark_pos, out, chunk_rows)

    def fill(self, buf: U8, chunk: DecodeChunk, ts_ns: I64, interface: U16, lengths: U32) -> U32:
        """Fill the chunk's offsets, timestamps and interfaces, and its captured and wire
        lengths into ``lengths`` (shape (2, ≥ rows)); returns the lengths of its rows."""
        walked = lengths[:, : chunk.last - chunk.first]
        fill_pcapng_parts(
            buf, chunk.part_first, chunk.part_pos, self.big, self.section_base,
            self.if_tsresol, self.if_tsoffset, chunk.offsets, walked[0], walked[1],
            ts_ns, interface,
        )  # fmt: skip
        return walked


def walk_pcapng(
    buf: U8, start: int, end: int, big: bool, section_base: int, interfaces: int,
    if_tsresol: I64, if_tsoffset: I64, *, parts: int | None = None,
    min_part: int | None = None, mark_every: int = MARK_EVERY,
) -> PcapngWalk:  # fmt: skip
    """Walk the packet blocks of ``buf[start:end]`` on all cores, ``start`` being the first
    packet block, where the serial walk's state is the section and interfaces given.

    ``parts`` (default: ``PARTS_PER_THREAD`` per thread) and ``min_part`` (default
    ``pcap_walk.MIN_PART_BYTES``) bound how the file is cut; the result does not depend on them.
    """
    size = end - start
    most = max(1, size // (MIN_PART_BYTES if min_part is None else min_part))
    k = min(most, parts or PARTS_PER_THREAD * numba.get_num_threads())
    starts = [start]
    for cut in range(1, k):
        lo = max(start + cut * size // k, starts[-1] + 1)
        hi = min(start + (cut + 1) * size // k, lo + SEARCH)
        guess = find_block_start(buf, lo, hi, end, big, start % 4)
        if guess >= 0:
            starts.append(guess)
    limits = [*starts[1:], end + 1]
    longest = max(limit - first for first, limit in zip(starts, limits, strict=True))
    marks = np.empty((len(starts), longest // 32 // mark_every + 2), np.int64)
    counts, ends, stops = (np.empty(len(starts), np.int64) for _ in range(3))
    walk_pcapng_parts(
        buf, np.array(starts, np.int64), np.array(limits, np.int64), end, big, section_base,
        interfaces, mark_every, counts, ends, stops, marks,
    )  # fmt: skip
    # the verified run: part j continues the walk if it starts exactly where part j - 1 ended
    pos, rows, taken = start, 0, []
    for j, first in enumerate(starts):
        if first != pos:  # a wrong guess: the serial walk reads on from here
            break
        n = int(counts[j])
        taken.append((rows, n, marks[j]))
        rows += n
        pos = int(ends[j])
        if stops[j] != _REACHED:
            break
    mark_row, mark_pos = joined_marks(taken, rows, mark_every)
    return PcapngWalk(
        start, rows, min(pos, end), mark_row, mark_pos, big, section_base, if_tsresol, if_tsoffset
    )
