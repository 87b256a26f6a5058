"""libpcap savefiles: the 24-byte file header and the walk over the 16-byte record headers.

Format: https://datatracker.ietf.org/doc/draft-ietf-opsawg-pcap/ (and libpcap's sf-pcap.c).
Four magics: µs or ns timestamps, written by a little- or big-endian host.
"""

from __future__ import annotations

import numpy as np

from tcplens.capture.compiled import inline_kernel, kernel, read_u32
from tcplens.capture.formats import FILE_HEADER_LEN, RECORD_HEADER_LEN, PcapHeader
from tcplens.capture.records import (
    BAD_RECORD_TOO_LONG,
    MAX_RECORD,
    STOP_BAD,
    STOP_FULL,
    STOP_NEED_MORE,
)
from tcplens.capture.table import I64, U8, U16


@inline_kernel
def record_header(buf: U8, pos: int, big: bool, nanoseconds: bool) -> tuple[int, int, int]:
    """The 16-byte record header at ``pos``: ``(timestamp ns, captured length, wire length)``."""
    seconds = read_u32(buf, pos, big)
    fraction = read_u32(buf, pos + 4, big)
    ts = seconds * 1_000_000_000 + (fraction if nanoseconds else fraction * 1000)
    return ts, read_u32(buf, pos + 8, big), read_u32(buf, pos + 12, big)


@kernel
def walk_pcap_records(
    buf: U8, pos: int, end: int, big: bool, data_offset: I64
) -> tuple[int, int, int, int]:
    """Index the complete records in ``buf[pos:end]``: returns ``(n, pos, stop, info)``.

    Only where each packet's bytes start is written: this walk is the one sequential part of
    reading a pcap (each record's length says where the next one starts). The record headers'
    fields are decoded with the packets, on all cores (``decode.decode_packets``).
    """
    n = 0
    capacity = data_offset.shape[0]
    while True:
        if end - pos < RECORD_HEADER_LEN:
            return n, pos, STOP_NEED_MORE, RECORD_HEADER_LEN
        incl = read_u32(buf, pos + 8, big)
        if incl > MAX_RECORD:
            return n, pos, STOP_BAD, BAD_RECORD_TOO_LONG
        if end - pos - RECORD_HEADER_LEN < incl:
            return n, pos, STOP_NEED_MORE, RECORD_HEADER_LEN + incl
        if n >= capacity:
            return n, pos, STOP_FULL, 0
        data_offset[n] = pos + RECORD_HEADER_LEN
        n += 1
        pos += RECORD_HEADER_LEN + incl


class PcapWalker:
    """The record walk of one pcap file (all records on one interface, one link type)."""

    min_record = RECORD_HEADER_LEN
    start = FILE_HEADER_LEN
    record_header = RECORD_HEADER_LEN  # the decoder reads each packet's record header

    def __init__(self, header: PcapHeader) -> None:
        self.header = header
        self.if_link: U16 = np.array([header.link_type], np.uint16)

    def index(self, buf: U8, pos: int, end: int, data_offset: I64) -> tuple[int, int, int, int]:
        return walk_pcap_records(buf, pos, end, self.header.big_endian, data_offset)

    def take_comments(self, buf: U8, first_frame: int) -> list[str]:
        return []

    def link_types(self) -> tuple[int, ...]:
        return (self.header.link_type,)
