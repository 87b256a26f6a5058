"""Where the packet records of one buffer are: the output of the format walkers (pcap, pcapng).

A walker scans one buffer of the (decompressed) file and writes, per packet record, where its
bytes start; the pcapng walker also fills the table's ``RecordColumns`` (captured and wire
length, timestamp, interface), which depend on its sections and interfaces, while a pcap
record header is decoded with its packet. It stops at the first record that is not entirely in
the buffer, or at the first structure it cannot trust, and says why with one of the ``STOP_*``
codes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from tcplens.capture.table import I64, U16, U32

# A record longer than this is corrupt: libpcap's MAXIMUM_SNAPLEN, also Wireshark's limit
MAX_RECORD = 262144

# why a walker stopped
STOP_NEED_MORE = 0  # the record at ``pos`` is not complete in the buffer; ``info`` = bytes it needs
STOP_FULL = 1  # the index is full; call again from ``pos``
STOP_BAD = 2  # the structure at ``pos`` is corrupt; ``info`` is one of the ``BAD_*`` codes
STOP_SKIP = 3  # a block at ``pos`` that the reader does not need is larger than the buffer; skip it

# what was corrupt (``info`` when ``STOP_BAD``)
BAD_RECORD_TOO_LONG = 1
BAD_BLOCK_LENGTH = 2
BAD_TRAILING_LENGTH = 3
BAD_BYTE_ORDER = 4
BAD_VERSION = 5
BAD_INTERFACE = 6
BAD_NO_SECTION = 7
BAD_TOO_MANY_INTERFACES = 8
BAD_CAPLEN = 9

BAD_REASONS = {
    BAD_RECORD_TOO_LONG: f"a packet record claims more than {MAX_RECORD} captured bytes",
    BAD_BLOCK_LENGTH: "a pcapng block length is invalid (not ≥ 12 and a multiple of 4)",
    BAD_TRAILING_LENGTH: "a pcapng block's trailing length differs from its leading length",
    BAD_BYTE_ORDER: "a pcapng section header has an unknown byte-order magic",
    BAD_VERSION: "a pcapng section header has an unsupported major version",
    BAD_INTERFACE: "a packet refers to an interface that was not described before it",
    BAD_NO_SECTION: "a pcapng block appears before any section header",
    BAD_TOO_MANY_INTERFACES: "the capture describes more than 65535 interfaces",
    BAD_CAPLEN: "a packet's captured length does not fit in its block",
}


@dataclass(frozen=True)
class RecordColumns:
    """The per-record columns a walker fills (views on the packet table's columns)."""

    ts_ns: I64
    caplen: U32
    origlen: U32
    interface: U16


@dataclass(frozen=True)
class DecodeChunk:
    """Rows ``[first, last)``, decoded in one call, in parts ``part_first`` (row bounds in the
    chunk); ``offsets``: where each row's bytes start, or, with ``part_pos`` (where each part's
    first record is), the buffer the decoder writes them into."""

    first: int
    last: int
    offsets: I64
    part_first: I64
    part_pos: I64


class RecordIndex(Protocol):
    """Where each record's bytes start, handed to the decoder a chunk of rows at a time."""

    def chunks(self, rows: int, out: I64, chunk_rows: int, parts: int) -> list[DecodeChunk]:
        """Chunks of ≤ ``chunk_rows`` rows covering ``[0, rows)``, in about ``parts`` parts each;
        ``out`` has room for the rows of one."""
        ...


_NO_POSITIONS = np.zeros(0, np.int64)


@dataclass(frozen=True)
class IndexedRecords:
    """A walker's index: one offset per record, all in memory (streams, pcapng)."""

    data_offset: I64

    def chunks(self, rows: int, out: I64, chunk_rows: int, parts: int) -> list[DecodeChunk]:
        chunks = []
        for first in range(0, rows, chunk_rows):
            last = min(rows, first + chunk_rows)
            part_first = np.arange(parts + 1) * (last - first) // parts
            chunk = DecodeChunk(
                first, last, self.data_offset[first:last], part_first, _NO_POSITIONS
            )
            chunks.append(chunk)
        return chunks


def joined_marks(parts: list[tuple[int, int, I64]], rows: int, mark_every: int) -> tuple[I64, I64]:
    """The marks of a walk done in parts: ``parts`` holds each part's (first row, rows, the
    positions it kept every ``mark_every`` rows), in order; ``rows`` is the walk's row count.
    Returns ``(mark_row, mark_pos)`` as ``chunks_from_marks`` reads them."""
    mark_row = np.concatenate(
        [first + mark_every * np.arange(-(-n // mark_every)) for first, n, _ in parts]
        + [np.array([rows])]
    ).astype(np.int64)
    mark_pos = np.concatenate(
        [positions[: -(-n // mark_every)] for _, n, positions in parts] + [np.zeros(0, np.int64)]
    )
    return mark_row, mark_pos


def chunks_from_marks(mark_row: I64, mark_pos: I64, out: I64, chunk_rows: int) -> list[DecodeChunk]:
    """Chunks of ≤ ``chunk_rows`` rows (or one mark's rows) starting at marks, in parts from mark
    to mark: ``mark_row[j]``/``mark_pos[j]`` are the row and position of a record the walk kept
    (``mark_row`` ends with the number of rows); ``out`` is each chunk's offsets buffer.

    The first chunk is the first mark's rows only: decoded while the address book is empty, its
    packets note a miss for each address they carry (resolved after the chunk, one by one); the
    later chunks find most addresses in the book. A first chunk of 8 marks at 2^17 rows noted
    262k misses and sized the book for them (8 MB) to learn a few addresses.
    """
    chunks = []
    j, marks = 0, mark_pos.shape[0]
    while j < marks:  # per chunk of marks, not per packet
        k = j + 1
        while k < marks and j > 0 and mark_row[k + 1] - mark_row[j] <= chunk_rows:
            k += 1
        first, last = int(mark_row[j]), int(mark_row[k])
        part_first = mark_row[j : k + 1] - first
        chunks.append(DecodeChunk(first, last, out[: last - first], part_first, mark_pos[j:k]))
        j = k
    return chunks
