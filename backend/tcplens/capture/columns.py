"""The table's columns while they are read: a few blocks of dense columns, entries for the few
packets that carry an option, and the decoder's per-part scratch (``reader``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tcplens.capture.addresses import U64
from tcplens.capture.memory import anonymous_memory
from tcplens.capture.records import DecodeChunk
from tcplens.capture.table import DONE_AFTER_EVENTS, DONE_AFTER_FLOWS, I64, dense_layout
from tcplens.capture.undecoded import UNDECODED_SLOTS

Columns = dict[str, Any]


@dataclass
class DecodeScratch:
    """The decoder's per-part outputs, with room for the most parts and rows of any chunk."""

    misses: I64
    miss_row: I64
    miss_key: U64
    ts_bounds: I64
    steps: I64  # (``decode.decode_packets``)
    dns_count: I64
    dns: I64
    undecoded: I64
    undecoded_n: I64

    @classmethod
    def for_chunks(cls, chunks: list[DecodeChunk]) -> DecodeScratch:
        parts = max((c.part_first.shape[0] - 1 for c in chunks), default=1)
        largest = max((int(np.diff(c.part_first).max()) for c in chunks), default=0)
        room = 2 * largest  # two addresses per row of a part
        return cls(
            np.empty(parts, np.int64),
            np.empty((parts, room), np.int64),
            anonymous_memory(16 * parts * room).view(np.uint64).reshape(parts, room, 2),
            np.empty((parts, 2), np.int64),
            # the rows where the clock steps: room for all of a part's, pages touched if used
            np.empty((parts, 2 + largest), np.int64),
            np.empty(parts, np.int64),
            # the UDP port-53 packets of a part: room for all its rows, pages touched only if used
            np.empty((3, parts, largest), np.int64),
            np.empty((parts, UNDECODED_SLOTS, 2), np.int64),
            np.empty(parts, np.int64),
        )

    def parts(self, k: int) -> tuple[I64, I64, U64, I64, I64, I64, I64, I64, I64]:
        """The outputs for a chunk of ``k`` parts."""
        return (
            self.misses[:k], self.miss_row[:k], self.miss_key[:k], self.ts_bounds[:k],
            self.steps[:k], self.dns_count[:k], self.dns[:, :k], self.undecoded[:k],
            self.undecoded_n[:k],
        )  # fmt: skip


@dataclass
class Entries:
    """Entries for the few packets that carry an option, appended in row order chunk by chunk.

    Mapped zero-filled and not populated, with room for the most entries a chunk can add: only
    the pages the entries fill become resident.
    """

    layout: tuple[tuple[str, type], ...]
    capacity: int
    fill: int = 0
    arrays: Columns = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.arrays = {
            name: anonymous_memory(self.capacity * np.dtype(dtype).itemsize).view(dtype)
            for name, dtype in self.layout
        }

    def room(self, more: int) -> Columns:
        """The arrays, grown (copied into twice the room) if ``more`` entries might not fit."""
        if self.fill + more > self.capacity:
            old = self.arrays
            self.capacity = max(2 * self.capacity, self.fill + more)
            self.__post_init__()
            for name, array in old.items():
                self.arrays[name][: self.fill] = array[: self.fill]
        return self.arrays

    def columns(self) -> Columns:
        return {name: array[: self.fill] for name, array in self.arrays.items()}


@dataclass
class TableColumns:
    """Columns for ``n`` packets: ``dense`` has a row per packet, the others entries (see
    ``PacketTable``: SYN options, SACK blocks, long lengths, tunnels)."""

    dense: Columns
    handshake: Entries
    sack_blocks: Entries
    long_lengths: Entries
    tunnels: Entries

    def rows_from(self, first: int) -> TableColumns:
        """The dense columns from row ``first`` on (the entries are shared)."""
        dense = {name: column[first:] for name, column in self.dense.items()}
        return TableColumns(
            dense, self.handshake, self.sack_blocks, self.long_lengths, self.tunnels
        )

    def entries(self) -> Columns:
        """The entries' columns, as filled so far."""
        return (
            self.handshake.columns() | self.sack_blocks.columns()
            | self.long_lengths.columns() | self.tunnels.columns()
        )  # fmt: skip


def allocate_columns(n: int, pcap: bool, *, populate: bool = True) -> TableColumns:
    """Columns for ``n`` packets, uninitialised: the walker and the decoder write every row.

    The dense columns are views on a few blocks of anonymous memory, one per group of columns
    the TCP analysis is done with at the same step (``table.DONE_AFTER_*``): where it consumes
    the table, each block comes free whole, for arrays of any size (``memory.recycling``).
    Their pages are populated at once (``MADV_POPULATE_WRITE``), or, with ``populate=False``,
    first touched by the decoding, on all cores: first touches one 4 KiB page at a time cost
    about twice the kernel time here, and numpy's own arrays of ≥ 4 MiB ask for transparent
    huge pages, whose first touches stall in memory compaction on this shared machine
    (bulk_5M read: 1.2-1.6 s of system time with them, 0.4 s without). A pcap has no
    per-packet interface and link type columns.
    The entries (SYN options, SACK blocks, long lengths, tunnels) get room for one per packet (blocks:
    more if they come, see ``Entries.room``), mapped but touched only where written.
    """
    dense = _blocks({name: (n, np.dtype(dtype)) for name, dtype in dense_layout(pcap)}, populate)
    return TableColumns(
        dense,
        Entries(HANDSHAKE, n),
        Entries(SACK_BLOCKS, n),
        Entries(LONG_LENGTHS, n),
        Entries(TUNNELS, n),
    )


GROUPS = (DONE_AFTER_FLOWS, DONE_AFTER_EVENTS)  # a block each (allocate_columns)

HANDSHAKE: tuple[tuple[str, type], ...] = (
    ("handshake_rows", np.uint32),
    ("handshake_mss", np.int32),
    ("handshake_wscale", np.int8),
    ("handshake_sack_perm", np.bool_),
)
SACK_BLOCKS: tuple[tuple[str, type], ...] = (
    ("sack_block_row", np.uint32),
    ("sack_block_left", np.uint32),
    ("sack_block_right", np.uint32),
)
LONG_LENGTHS: tuple[tuple[str, type], ...] = (
    ("long_rows", np.uint32),
    ("long_caplen", np.uint32),
    ("long_origlen", np.uint32),
    ("long_payload", np.uint32),
)


TUNNELS: tuple[tuple[str, type], ...] = (
    ("tunnel_rows", np.uint32),
    ("tunnel_layers", np.uint16),
)


def join_pieces(pieces: list[TableColumns]) -> Columns:
    """One set of columns from the per-window pieces, freeing each piece's column as it goes.

    Into memory mapped as in ``allocate_columns`` (populated: every row or entry is copied).
    """
    if not pieces:
        pieces = [allocate_columns(0, False)]
    parts: dict[str, list[Any]] = {}
    for piece in pieces:
        for name, column in [*piece.dense.items(), *piece.entries().items()]:
            parts.setdefault(name, []).append(column)
    pieces.clear()
    joined = {name: arrays for name, arrays in parts.items() if len(arrays) > 1}
    shapes = {
        name: (sum(array.shape[0] for array in arrays), arrays[0].dtype)
        for name, arrays in joined.items()
    }
    columns = {name: arrays[0] for name, arrays in parts.items() if len(arrays) == 1}
    for name, column in _blocks(shapes, populate=True).items():
        start = 0
        for array in joined[name]:
            column[start : start + array.shape[0]] = array
            start += array.shape[0]
        columns[name] = column
        joined[name].clear()
    return columns


def _blocks(shapes: dict[str, tuple[int, np.dtype[Any]]], populate: bool) -> Columns:
    """Zero-filled arrays of ``shapes`` (rows, dtype): the dense columns of each ``DONE_AFTER_*``
    group in one block, 64-byte aligned (see ``allocate_columns``), any other its own mapping."""
    grouped = {name for group in GROUPS for name in group}
    blocks = [[name for name in group if name in shapes] for group in GROUPS]
    blocks += [[name] for name in shapes if name not in grouped]
    out: Columns = {}
    for names in blocks:
        sizes = [shapes[name][0] * shapes[name][1].itemsize for name in names]
        starts = np.concatenate([[0], np.cumsum([-(-size // 64) * 64 for size in sizes])])
        block = anonymous_memory(int(starts[-1]), populate=populate)
        for name, start, size in zip(names, starts[:-1].tolist(), sizes, strict=True):
            out[name] = block[start : start + size].view(shapes[name][1])
    return out
