"""pcapng: the walk over blocks, sections (each with its byte order) and interfaces.

Format: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcapng/ (cited as "pcapng §").
Blocks read: Section Header (SHB, §4.1), Interface Description (IDB, §4.2), Enhanced Packet
(EPB, §4.3), Simple Packet (SPB, §4.4) and the obsolete Packet Block (OPB, Appendix A). Every
other block is skipped by its length. Every length is checked before it is used (§3.1: ≥ 12, a
multiple of 4, the trailing copy equal to the leading one).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from tcplens.capture.compiled import byte, inline_kernel, kernel, read_u16, read_u32
from tcplens.capture.formats import EPB, IDB, MIN_BLOCK, OPB, SHB, SPB
from tcplens.capture.records import (
    BAD_BLOCK_LENGTH,
    BAD_BYTE_ORDER,
    BAD_CAPLEN,
    BAD_INTERFACE,
    BAD_NO_SECTION,
    BAD_RECORD_TOO_LONG,
    BAD_TOO_MANY_INTERFACES,
    BAD_TRAILING_LENGTH,
    BAD_VERSION,
    MAX_RECORD,
    STOP_BAD,
    STOP_FULL,
    STOP_NEED_MORE,
    STOP_SKIP,
    RecordColumns,
)
from tcplens.capture.table import I64, U8, U16, U32

MIN_SPB = 16  # the smallest block that is a packet
MAX_INTERFACES = 65535
MAX_COMMENTS = 64  # per walk; the reader drains them after each buffer

OPT_END = 0
OPT_COMMENT = 1
IF_TSRESOL = 9
IF_TSOFFSET = 14
DEFAULT_TSRESOL = 6  # microseconds (pcapng §4.2)

# walker state slots
ST_BIG = 0  # current section is big-endian
ST_SECTION_BASE = 1  # global index of the current section's interface 0
ST_INTERFACES = 2  # interfaces described so far, all sections
ST_IN_SECTION = 3  # a SHB has been seen
ST_LAST_TS = 4  # timestamp of the last packet (SPBs have none, pcapng §4.4)
ST_COMMENTS = 5  # comments recorded in this walk
ST_COMMENTS_DROPPED = 6


@dataclass
class PcapngState:
    """What a walk carries from one buffer to the next: sections and interfaces."""

    state: I64 = field(default_factory=lambda: np.zeros(8, np.int64))
    if_link: U16 = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.uint16))
    if_snaplen: I64 = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))
    if_tsresol: I64 = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))
    if_tsoffset: I64 = field(default_factory=lambda: np.zeros(MAX_INTERFACES, np.int64))
    comment_pos: I64 = field(default_factory=lambda: np.zeros(MAX_COMMENTS, np.int64))
    comment_len: I64 = field(default_factory=lambda: np.zeros(MAX_COMMENTS, np.int64))
    comment_row: I64 = field(default_factory=lambda: np.zeros(MAX_COMMENTS, np.int64))

    @property
    def interfaces(self) -> int:
        return int(self.state[ST_INTERFACES])

    @property
    def big(self) -> bool:
        """The current section is big-endian."""
        return bool(self.state[ST_BIG])

    @property
    def section_base(self) -> int:
        """The global index of the current section's first interface."""
        return int(self.state[ST_SECTION_BASE])

    def copy(self) -> PcapngState:
        return PcapngState(*(getattr(self, f.name).copy() for f in fields(self)))


@inline_kernel
def _power_of_ten(exponent: int) -> int:
    result = 1
    for _ in range(exponent):
        result *= 10
    return result


@inline_kernel
def units_to_ns(units: int, tsresol: int) -> int:
    """Timestamp in interface units → ns. ``if_tsresol``: MSB clear 10^-v s, set 2^-v s (§4.2)."""
    v = tsresol & 0x7F
    if tsresol & 0x80:
        if v <= 30:
            whole = units >> v
            part = units & ((1 << v) - 1)
            return whole * 1_000_000_000 + ((part * 1_000_000_000) >> v)
        return int(units / 2.0**v * 1e9)
    if v <= 9:
        return units * _power_of_ten(9 - v)
    if v <= 18:
        return units // _power_of_ten(v - 9)
    return 0


@inline_kernel
def scan_options(
    buf: U8, pos: int, stop: int, big: bool, row: int, state: I64,
    comment_pos: I64, comment_len: I64, comment_row: I64,
) -> tuple[int, int]:  # fmt: skip
    """Walk the options in ``buf[pos:stop]`` (§3.5): keep comments; return tsresol, tsoffset.

    The two interface options only mean something in an IDB; callers elsewhere ignore them.
    Every step advances by at least 4 bytes; an option running past ``stop`` ends the scan.
    """
    tsresol = DEFAULT_TSRESOL
    tsoffset = 0
    while stop - pos >= 4:
        code = read_u16(buf, pos, big)
        length = read_u16(buf, pos + 2, big)
        if code == OPT_END or stop - pos - 4 < length:
            break
        value = pos + 4
        if code == OPT_COMMENT:
            k = state[ST_COMMENTS]
            if k < comment_pos.shape[0]:
                comment_pos[k] = value
                comment_len[k] = length
                comment_row[k] = row
                state[ST_COMMENTS] = k + 1
            else:
                state[ST_COMMENTS_DROPPED] += 1
        elif code == IF_TSRESOL and length == 1:
            tsresol = byte(buf, value)
        elif code == IF_TSOFFSET and length == 8:
            low = read_u32(buf, value + (4 if big else 0), big)
            high = read_u32(buf, value + (0 if big else 4), big)
            tsoffset = (high << 32) | low  # signed 64-bit seconds: wraps as two's complement
        pos = value + ((length + 3) & ~3)
    return tsresol, tsoffset


@kernel
def walk_pcapng_blocks(
    buf: U8, pos: int, end: int, count_only: bool,
    state: I64, if_link: U16, if_snaplen: I64, if_tsresol: I64, if_tsoffset: I64,
    comment_pos: I64, comment_len: I64, comment_row: I64,
    data_offset: I64, caplen: U32, origlen: U32, ts_ns: I64, interface: U16,
) -> tuple[int, int, int, int]:  # fmt: skip
    """Index the packets of the complete blocks in ``buf[pos:end]``: ``(n, pos, stop, info)``.

    With ``count_only``, pass a copy of ``state``: only the interface count and sections are
    tracked and nothing else is written; the reader then allocates exactly and walks again.
    """
    n = 0
    capacity = data_offset.shape[0]
    while True:
        if end - pos < MIN_BLOCK:
            return n, pos, STOP_NEED_MORE, MIN_BLOCK
        big = state[ST_BIG] != 0
        block_type = read_u32(buf, pos, big)  # SHB's type reads the same in both orders
        if block_type == SHB:
            magic = read_u32(buf, pos + 8, True)
            if magic == 0x1A2B3C4D:
                big = True
            elif magic == 0x4D3C2B1A:
                big = False
            else:
                return n, pos, STOP_BAD, BAD_BYTE_ORDER
        elif state[ST_IN_SECTION] == 0:
            return n, pos, STOP_BAD, BAD_NO_SECTION
        length = read_u32(buf, pos + 4, big)
        if length < MIN_BLOCK or length % 4 != 0:
            return n, pos, STOP_BAD, BAD_BLOCK_LENGTH
        needed = block_type in (SHB, IDB, OPB, SPB, EPB)
        if end - pos < length:
            return n, pos, (STOP_NEED_MORE if needed else STOP_SKIP), length
        if read_u32(buf, pos + length - 4, big) != length:
            return n, pos, STOP_BAD, BAD_TRAILING_LENGTH
        body_end = pos + length - 4
        if block_type == SHB:
            if length < 28:
                return n, pos, STOP_BAD, BAD_BLOCK_LENGTH
            if read_u16(buf, pos + 12, big) != 1:
                return n, pos, STOP_BAD, BAD_VERSION
            state[ST_BIG] = 1 if big else 0
            state[ST_SECTION_BASE] = state[ST_INTERFACES]
            state[ST_IN_SECTION] = 1
            if not count_only:
                scan_options(
                    buf, pos + 24, body_end, big, -1, state, comment_pos, comment_len, comment_row
                )
        elif block_type == IDB:
            if length < 20:
                return n, pos, STOP_BAD, BAD_BLOCK_LENGTH
            k = state[ST_INTERFACES]
            if k >= MAX_INTERFACES:
                return n, pos, STOP_BAD, BAD_TOO_MANY_INTERFACES
            state[ST_INTERFACES] = k + 1
            if count_only:
                pos += length
                continue
            tsresol, tsoffset = scan_options(
                buf, pos + 16, body_end, big, -1, state, comment_pos, comment_len, comment_row
            )
            if_link[k] = read_u16(buf, pos + 8, big)
            if_snaplen[k] = read_u32(buf, pos + 12, big)
            if_tsresol[k] = tsresol
            if_tsoffset[k] = tsoffset
        elif block_type in (EPB, OPB):
            if length < 32:
                return n, pos, STOP_BAD, BAD_BLOCK_LENGTH
            if block_type == EPB:
                local = read_u32(buf, pos + 8, big)
            else:
                local = read_u16(buf, pos + 8, big)
            k = state[ST_SECTION_BASE] + local
            if k >= state[ST_INTERFACES]:
                return n, pos, STOP_BAD, BAD_INTERFACE
            captured = read_u32(buf, pos + 20, big)
            if captured > MAX_RECORD:
                return n, pos, STOP_BAD, BAD_RECORD_TOO_LONG
            if captured > length - 32:
                return n, pos, STOP_BAD, BAD_CAPLEN
            if count_only:
                n += 1
                pos += length
                continue
            if n >= capacity:
                return n, pos, STOP_FULL, 0
            units = (read_u32(buf, pos + 12, big) << 32) | read_u32(buf, pos + 16, big)
            ts = units_to_ns(units, if_tsresol[k]) + if_tsoffset[k] * 1_000_000_000
            data_offset[n] = pos + 28
            caplen[n] = captured
            origlen[n] = read_u32(buf, pos + 24, big)
            ts_ns[n] = ts
            interface[n] = k
            state[ST_LAST_TS] = ts
            options = pos + 28 + ((captured + 3) & ~3)
            if body_end - options >= 4:  # most packets have none: skip the call (19 ns each)
                scan_options(
                    buf, options, body_end, big, n, state, comment_pos, comment_len, comment_row
                )
            n += 1
        elif block_type == SPB:
            if length < MIN_SPB:
                return n, pos, STOP_BAD, BAD_BLOCK_LENGTH
            k = state[ST_SECTION_BASE]  # an SPB belongs to the section's first interface (§4.4)
            if k >= state[ST_INTERFACES]:
                return n, pos, STOP_BAD, BAD_INTERFACE
            if count_only:
                n += 1
                pos += length
                continue
            if n >= capacity:
                return n, pos, STOP_FULL, 0
            wire = read_u32(buf, pos + 8, big)
            captured = min(wire, length - 16, MAX_RECORD)
            if if_snaplen[k] > 0:
                captured = min(captured, if_snaplen[k])
            data_offset[n] = pos + 12
            caplen[n] = captured
            origlen[n] = wire
            ts_ns[n] = state[ST_LAST_TS]
            interface[n] = k
            n += 1
        pos += length


_NONE = np.empty(0, np.int64)
_NOTHING = RecordColumns(_NONE, _NONE.view(np.uint32), _NONE.view(np.uint32), _NONE.view(np.uint16))


class PcapngWalker:
    """The block walk of one pcapng file; carries sections and interfaces across buffers."""

    min_record = MIN_SPB
    start = 0
    record_header = 0  # the walk itself writes the records' columns (per-interface state)

    def __init__(self) -> None:
        self.state = PcapngState()
        self.if_link = self.state.if_link  # link type by global interface index

    def _walk(
        self, buf: U8, pos: int, end: int, count_only: bool, state: I64,
        columns: RecordColumns, data_offset: I64, s: PcapngState | None = None,
    ) -> tuple[int, int, int, int]:  # fmt: skip
        s = self.state if s is None else s
        return walk_pcapng_blocks(
            buf, pos, end, count_only,
            state, s.if_link, s.if_snaplen, s.if_tsresol, s.if_tsoffset,
            s.comment_pos, s.comment_len, s.comment_row,
            data_offset, columns.caplen, columns.origlen, columns.ts_ns, columns.interface,
        )  # fmt: skip

    def count(self, buf: U8, pos: int, end: int) -> int:
        n, _, _, _ = self._walk(buf, pos, end, True, self.state.state.copy(), _NOTHING, _NONE)
        return n

    def headers(self, buf: U8, end: int) -> int:
        """Walk the blocks before the first packet block (section header, interfaces), keeping
        what they say; returns the packet block's position. -1, and nothing kept, if the walk
        stops before one (no packet, a corrupt header: the serial walk will say what)."""
        trial = self.state.copy()
        _, pos, stop, _ = self._walk(buf, self.start, end, False, trial.state, _NOTHING, _NONE,
                                     trial)  # fmt: skip
        if stop != STOP_FULL:  # the first packet block is where a walk with no room stops
            return -1
        self.state = trial
        self.if_link = trial.if_link
        return pos

    def fill(
        self, buf: U8, pos: int, end: int, columns: RecordColumns, data_offset: I64
    ) -> tuple[int, int, int, int]:
        return self._walk(buf, pos, end, False, self.state.state, columns, data_offset)

    def carry_time(self, ts_ns: int) -> None:
        """The last packet's time, for a simple packet block next (pcapng §4.4): after a run
        of packets another walk read."""
        self.state.state[ST_LAST_TS] = ts_ns

    def take_comments(self, buf: U8, first_frame: int) -> list[str]:
        """Comment options (§3.5, opt_comment) of SHBs, IDBs and packets, as UTF-8 text."""
        s = self.state
        found = int(s.state[ST_COMMENTS])
        comments = []
        for k in range(found):  # a handful per buffer (at most MAX_COMMENTS), not per packet
            start = int(s.comment_pos[k])
            text = bytes(buf[start : start + int(s.comment_len[k])]).decode("utf-8", "replace")
            row = int(s.comment_row[k])
            text = text.rstrip("\x00")
            comments.append(text if row < 0 else f"frame {first_frame + row}: {text}")
        s.state[ST_COMMENTS] = 0
        return comments

    def link_types(self) -> tuple[int, ...]:
        return tuple(sorted({int(t) for t in self.state.if_link[: self.state.interfaces]}))
