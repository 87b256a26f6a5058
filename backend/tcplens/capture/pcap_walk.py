"""The record walk of a mapped pcap file, on all cores, exactly as the serial walk would find it.

Each record header says where the next one starts, so the walk is sequential by nature. To run
it on every core the file is cut into parts and each part starts at a record found near its cut:
the first position from which a chain of consecutive record headers is plausible (lengths within
the snapshot length and ≤ the wire length, sub-second fraction in range, timestamps close to each
other and to the first packet's, every record inside the file). A guess can be wrong (a payload that looks like headers),
so nothing is trusted: part ``k``'s walk must end exactly where part ``k + 1`` starts. Where a join
fails, the walk continues serially from where the verified walk got to, until it lands on a later
part's start, whose walk is then the true continuation. The result is the serial walk's in every
case, the stop (truncation, corrupt record) included; only the time differs.

Nothing is written per packet: each part keeps the position of one record in ``mark_every``, and
the decoder walks each part of a chunk from one of those marks (``PcapWalk.chunks``), reading the
record headers it decodes anyway.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numba
import numpy as np

from tcplens.capture.compiled import kernel, parallel_kernel, prefetch, read_u32
from tcplens.capture.formats import RECORD_HEADER_LEN, PcapHeader
from tcplens.capture.records import (
    BAD_RECORD_TOO_LONG,
    MAX_RECORD,
    STOP_BAD,
    STOP_NEED_MORE,
    DecodeChunk,
    chunks_from_marks,
    joined_marks,
)
from tcplens.capture.table import I64, U8

MARK_EVERY = 16384  # records between two kept positions
# how far ahead of a walk the CPU is asked to fetch the file's bytes, in records of the size of the
# one just read (``walk_parts``)
PREFETCH_RECORDS = 3
MIN_PART_BYTES = 4 << 20  # a smaller file, or part, is walked by one core
PARTS_PER_THREAD = 4  # more parts than cores: a wrong guess costs a serial redo of one part only
CHAIN = 8  # consecutive plausible record headers that make a guessed record start
MAX_GAP_SECONDS = 86_400  # two consecutive packets of a plausible chain are < a day apart
MAX_SPAN_SECONDS = 366 * 86_400  # and < a year from the capture's first packet
# a plausible wire length: TSO/GRO and BIG TCP frames reach a few hundred KiB. This (with the
# first packet's time) rejects the chain 4 bytes after the true one, which reads the fraction
# as seconds, the captured length as fraction, the wire length (= captured) as captured length
# and the frame's first bytes (a MAC address) as wire length
MAX_WIRE = 1 << 20
_REACHED = -1  # a part's walk got to its limit (the next part's start)


@kernel
def find_record_start(
    buf: U8, lo: int, hi: int, end: int, big: bool, nanoseconds: bool, bound: int, first: int
) -> int:
    """The first position in ``[lo, hi)`` where ``CHAIN`` plausible record headers follow each
    other (or reach exactly ``end``); -1 if none. A guess, verified by the walk. ``bound``: the
    largest captured length; ``first``: the first packet's seconds (-1: unknown)."""
    fractions = 1_000_000_000 if nanoseconds else 1_000_000
    for p in range(lo, hi):
        q = p
        previous = -1
        for _ in range(CHAIN):
            if q == end:
                break
            if end - q < RECORD_HEADER_LEN:
                q = -1
                break
            seconds = read_u32(buf, q, big)
            incl = read_u32(buf, q + 8, big)
            orig = read_u32(buf, q + 12, big)
            if (
                incl > bound
                or incl > orig
                or orig == 0
                or orig > MAX_WIRE
                or read_u32(buf, q + 4, big) >= fractions
                or end - q - RECORD_HEADER_LEN < incl
                or (previous >= 0 and abs(seconds - previous) > MAX_GAP_SECONDS)
                or (first >= 0 and abs(seconds - first) > MAX_SPAN_SECONDS)
            ):
                q = -1
                break
            previous = seconds
            q += RECORD_HEADER_LEN + incl
        if q >= 0:
            return p
    return -1


@parallel_kernel
def walk_parts(
    buf: U8, starts: I64, limits: I64, end: int, big: bool, every: int, per_thread: int,
    counts: I64, ends: I64, stops: I64, infos: I64, marks: I64,
) -> None:  # fmt: skip
    """Walk part ``k`` from ``starts[k]`` while before ``limits[k]``, on all cores.

    Writes its record count, where it stopped and why (``_REACHED``, or the serial walk's
    ``STOP_*`` and ``info``), and the position of its records ``0, every, 2 * every…`` in
    ``marks[k]``. The checks are the serial walk's (``pcap.walk_pcap_records``).

    Each core takes ``per_thread`` consecutive parts and steps them in turn, one record each:
    a part's next record header is known only once its current one is read, so one walk is a
    chain of dependent loads from memory; several chains interleaved keep several loads in
    flight (bulk_5M: 5.3 -> 4.4 ns/packet of CPU). Each step also asks for the bytes about
    ``PREFETCH_RECORDS`` records ahead (``prefetch``): the next headers are then already on their
    way when the chain gets there, where the CPU's own prefetchers stop at each 4 KiB page
    (bulk_5M over mapped pages, 15 runs each, medians: 24-30 -> 15-19 ms).
    """
    k = starts.shape[0]
    for g in numba.prange((k + per_thread - 1) // per_thread):
        first = g * per_thread
        m = min(per_thread, k - first)
        pos = starts[first : first + m].copy()
        n = np.zeros(m, np.int64)
        left = np.zeros(m, np.int64)  # records before the part's next mark
        walking = np.ones(m, np.bool_)
        for j in range(m):
            stops[first + j] = _REACHED
            infos[first + j] = 0
        active = m
        while active > 0:
            for j in range(m):
                if not walking[j]:
                    continue
                q = first + j
                p = pos[j]
                stop = _REACHED
                info = 0
                incl = 0
                if p >= limits[q]:
                    pass
                elif end - p < RECORD_HEADER_LEN:
                    stop = STOP_NEED_MORE
                    info = RECORD_HEADER_LEN
                else:
                    incl = read_u32(buf, p + 8, big)
                    prefetch(buf, min(p + PREFETCH_RECORDS * (RECORD_HEADER_LEN + incl), end - 1))
                    if incl > MAX_RECORD:
                        stop = STOP_BAD
                        info = BAD_RECORD_TOO_LONG
                    elif end - p - RECORD_HEADER_LEN < incl:
                        stop = STOP_NEED_MORE
                        info = RECORD_HEADER_LEN + incl
                    else:
                        if left[j] == 0:
                            marks[q, n[j] // every] = p
                            left[j] = every
                        left[j] -= 1
                        n[j] += 1
                        pos[j] = p + RECORD_HEADER_LEN + incl
                        continue
                walking[j] = False  # reached its limit, or stopped where the serial walk does
                active -= 1
                stops[q] = stop
                infos[q] = info
        for j in range(m):
            counts[first + j] = n[j]
            ends[first + j] = pos[j]


@dataclass
class PcapWalk:
    """Where the records of a mapped pcap are: ``rows`` records, then the walk's stop at ``pos``.

    ``mark_row[j]``/``mark_pos[j]``: row and position of a record, every ≤ ``mark_every`` rows
    (``mark_row`` ends with ``rows``). ``redone``: how many stretches were walked again
    serially because a guessed record start was wrong.
    """

    rows: int
    pos: int
    stop: int
    info: int
    mark_row: I64
    mark_pos: I64
    redone: int

    def chunks(self, rows: int, out: I64, chunk_rows: int, parts: int) -> list[DecodeChunk]:
        """Chunks of ≤ ``chunk_rows`` rows starting at marks, in parts from mark to mark (the
        walk's ``mark_every`` decides how many parts; ``parts`` is not used)."""
        return chunks_from_marks(self.mark_row, self.mark_pos, out, chunk_rows)


def walk_pcap(
    buf: U8, start: int, end: int, header: PcapHeader, *, parts: int | None = None,
    min_part: int | None = None, mark_every: int = MARK_EVERY,
) -> PcapWalk:  # fmt: skip
    """Walk the records of ``buf[start:end]`` (the whole file) on all cores.

    ``parts`` (default: ``PARTS_PER_THREAD`` per thread) and ``min_part`` (default
    ``MIN_PART_BYTES``) bound how the file is cut; the result does not depend on them. A
    record's position is kept every ``mark_every`` records of a part (and at each part's start).
    """
    size = end - start
    most = max(1, size // (MIN_PART_BYTES if min_part is None else min_part))
    k = min(most, parts or PARTS_PER_THREAD * numba.get_num_threads())
    snaplen = header.snaplen if 0 < header.snaplen < MAX_RECORD else MAX_RECORD
    first = read_u32(buf, start, header.big_endian) if end - start >= RECORD_HEADER_LEN else -1
    starts = [start]
    for cut in range(1, k):
        lo = start + cut * size // k
        # a record starts within a record's length of any byte of a readable stretch: a longer
        # search would only read garbage (hostile input) before the walk stops at its start
        hi = min(start + (cut + 1) * size // k, lo + RECORD_HEADER_LEN + MAX_RECORD + 1)
        guess = find_record_start(
            buf, max(lo, starts[-1] + 1), hi, end, header.big_endian, header.nanoseconds,
            snaplen, first,
        )  # fmt: skip
        if guess >= 0:
            starts.append(guess)
    big = header.big_endian
    found = _walk(buf, starts, [*starts[1:], end + 1], end, big, mark_every)
    segments = []  # (first row, part results, part index)
    pos, row, j, redone = start, 0, 0, 0
    while True:
        j = bisect.bisect_left(starts, pos, j)
        if j < len(starts) and starts[j] == pos:  # joins the verified walk: part j continues it
            part, index = found, j
            j += 1
        else:  # a wrong guess: walk serially up to the next guessed start
            limit = starts[j] if j < len(starts) else end + 1
            part, index = _walk(buf, [pos], [limit], end, big, mark_every), 0
            redone += 1
        counts, ends, stops, infos, marks = part
        segments.append((row, int(counts[index]), marks[index]))
        row += int(counts[index])
        pos = int(ends[index])
        if stops[index] != _REACHED:
            break
    mark_row, mark_pos = joined_marks(segments, row, mark_every)
    stop, info = int(stops[index]), int(infos[index])
    return PcapWalk(row, pos, stop, info, mark_row, mark_pos, redone)


def _walk(
    buf: U8, starts: list[int], limits: list[int], end: int, big: bool, every: int
) -> tuple[I64, I64, I64, I64, I64]:
    k = len(starts)
    longest = max(limit - first for first, limit in zip(starts, limits, strict=True))
    marks = np.empty((k, longest // RECORD_HEADER_LEN // every + 2), np.int64)
    counts, ends, stops, infos = (np.empty(k, np.int64) for _ in range(4))
    per_thread = -(-k // numba.get_num_threads())  # a group of parts per core
    walk_parts(
        buf, np.array(starts, np.int64), np.array(limits, np.int64), end, big, every,
        per_thread, counts, ends, stops, infos, marks,
    )  # fmt: skip
    return counts, ends, stops, infos, marks
