"""The compiled pass over packet records: link → IPv4/IPv6 → TCP (and UDP ports) into columns.

One loop over the records of a buffer, writing each field straight into its column. Every read is
preceded by a bounds check against the captured bytes; lengths from headers are never trusted to
stay inside the record. Sizes come from the IP header, not the captured length, so snaplen-cut
captures (``tcpdump -s 96``) still give the exact TCP payload length.
"""

from __future__ import annotations

import sys

import numba
import numpy as np

from tcplens.capture import table
from tcplens.capture.addresses import U64, find_address
from tcplens.capture.compiled import byte, inline_kernel, parallel_kernel, read_u16, read_u32
from tcplens.capture.link import (
    NEXT_IPV4,
    NEXT_IPV6,
    NEXT_SHORT,
    NEXT_UNSUPPORTED,
    skip_link_header,
)
from tcplens.capture.pcap import record_header as pcap_record_header
from tcplens.capture.table import I8, I32, I64, MAX_SACK_BLOCKS, U8, U16, U32, B

# the status bits as plain ints: numba mixes numpy uint8 scalars with int64 into floats
PARSED = int(table.PARSED)
TRUNCATED = int(table.TRUNCATED)
FRAGMENT = int(table.FRAGMENT)
NOT_TCP = int(table.NOT_TCP)
MALFORMED = int(table.MALFORMED)
UNSUPPORTED_LINK = int(table.UNSUPPORTED_LINK)

# Addresses are written 4 bytes at a time into a uint32 view of the (n, 16) address columns:
# reading the packet bytes in the host's order stores them in memory in packet order.
HOST_BIG_ENDIAN = sys.byteorder == "big"
IPV4_MAPPED_WORD = int(np.frombuffer(b"\x00\x00\xff\xff", np.uint32)[0])  # ::ffff:0:0/96

IPPROTO_HOPOPTS = 0
IPPROTO_TCP = 6
IPPROTO_UDP = 17
IPPROTO_ROUTING = 43
IPPROTO_FRAGMENT = 44
IPPROTO_AH = 51
IPPROTO_DSTOPTS = 60
MAX_IPV6_EXTENSIONS = 16
DNS_PORT = 53

TCPOPT_EOL = 0
TCPOPT_NOP = 1
TCPOPT_MSS = 2
TCPOPT_WSCALE = 3
TCPOPT_SACK_PERM = 4
TCPOPT_SACK = 5
TCPOPT_TIMESTAMP = 8


@inline_kernel
def _ipv6_extensions(
    buf: U8, pos: int, end: int, limit: int, next_header: int
) -> tuple[int, int, int]:
    """Walk the IPv6 extension chain (RFC 8200 §4): ``(protocol, transport_offset, fragment)``.

    ``fragment`` is 0 (none), 1 (first fragment) or 2 (a later fragment: never read as TCP).
    Stops at the first header that is not an extension we know, or that is not captured.
    """
    fragment = 0
    for _ in range(MAX_IPV6_EXTENSIONS):
        if next_header in (IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS):
            if end - pos < 2:
                return -1, pos, fragment
            length = (byte(buf, pos + 1) + 1) * 8
        elif next_header == IPPROTO_AH:
            if end - pos < 2:
                return -1, pos, fragment
            length = (byte(buf, pos + 1) + 2) * 4  # RFC 4302 §2.2: in 32-bit words, minus 2
        elif next_header == IPPROTO_FRAGMENT:
            if end - pos < 8:
                return -1, pos, fragment
            fragment = 2 if read_u16(buf, pos + 2, True) & 0xFFF8 else 1
            length = 8
        else:
            return next_header, pos, fragment
        next_header = byte(buf, pos)
        pos += length
        if pos > limit or fragment == 2:
            return (next_header if fragment == 2 else -1), pos, fragment
    return -1, pos, fragment


@inline_kernel
def _tcp_options(
    buf: U8, pos: int, stop: int, row: int,
    mss: I32, wscale: I8, sack_perm: B, sack_count: U8, sack_left: U32, sack_right: U32,
    has_ts: B, ts_val: U32, ts_ecr: U32,
) -> None:  # fmt: skip
    """Options in ``buf[pos:stop]`` (RFC 9293 §3.1); a malformed one ends this packet's parse."""
    while pos < stop:
        kind = byte(buf, pos)
        if kind == TCPOPT_EOL:
            return
        if kind == TCPOPT_NOP:
            pos += 1
            continue
        if stop - pos < 2:
            return
        length = byte(buf, pos + 1)
        if length < 2 or stop - pos < length:
            return
        if kind == TCPOPT_MSS and length == 4:
            mss[row] = read_u16(buf, pos + 2, True)
        elif kind == TCPOPT_WSCALE and length == 3:
            wscale[row] = min(byte(buf, pos + 2), 127)
        elif kind == TCPOPT_SACK_PERM and length == 2:
            sack_perm[row] = True
        elif kind == TCPOPT_SACK and (length - 2) % 8 == 0:
            blocks = min((length - 2) // 8, MAX_SACK_BLOCKS)
            for j in range(blocks):
                sack_left[row, j] = read_u32(buf, pos + 2 + 8 * j, True)
                sack_right[row, j] = read_u32(buf, pos + 6 + 8 * j, True)
            sack_count[row] = blocks
        elif kind == TCPOPT_TIMESTAMP and length == 10:
            has_ts[row] = True
            ts_val[row] = read_u32(buf, pos + 2, True)
            ts_ecr[row] = read_u32(buf, pos + 6, True)
        pos += length


@inline_kernel
def _words(first: int, second: int) -> np.uint64:
    """Two 32-bit words, read in the host's byte order, as one 64-bit word in memory order."""
    if HOST_BIG_ENDIAN:
        return (np.uint64(first) << np.uint64(32)) | np.uint64(second)
    return np.uint64(first) | (np.uint64(second) << np.uint64(32))


@inline_kernel
def _decode_row(
    buf: U8, i: int, data_offset: I64, caplen: U32, origlen: U32, link_type: U16,
    status: U8, ip_version: U8, ip_proto: U8, ip_total_len: U32,
    src_port: U16, dst_port: U16, tcp_seq: U32, tcp_ack: U32, tcp_flags: U16, tcp_window: U16,
    tcp_hdr_len: U8, tcp_payload_len: U32,
    mss: I32, wscale: I8, sack_perm: B, sack_count: U8, sack_left: U32, sack_right: U32,
    has_ts: B, ts_val: U32, ts_ecr: U32, udp_payload: I64,
) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:  # fmt: skip
    """Decode row ``i`` (its columns come reset); returns the source and destination address
    keys (two 64-bit words each, see ``addresses``; 0 when the packet has no IP header)."""
    h = HOST_BIG_ENDIAN
    s_hi = s_lo = d_hi = d_lo = np.uint64(0)
    start = data_offset[i]
    end = start + caplen[i]
    wire_end = start + max(origlen[i], caplen[i])
    following, pos = skip_link_header(buf, start, end, link_type[i])
    if following == NEXT_UNSUPPORTED:
        status[i] = UNSUPPORTED_LINK | NOT_TCP
        return s_hi, s_lo, d_hi, d_lo
    if following == NEXT_SHORT:
        status[i] = TRUNCATED | NOT_TCP
        return s_hi, s_lo, d_hi, d_lo
    if following != NEXT_IPV4 and following != NEXT_IPV6:
        status[i] = NOT_TCP
        return s_hi, s_lo, d_hi, d_lo
    flags = 0
    if following == NEXT_IPV4:
        ip_version[i] = 4
        if end - pos < 20:
            status[i] = TRUNCATED | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        header_len = (byte(buf, pos) & 0x0F) * 4
        total = read_u16(buf, pos + 2, True)
        if total == 0:
            total = wire_end - pos  # TSO: Wireshark takes the frame's length when this is 0
        if byte(buf, pos) >> 4 != 4 or header_len < 20 or total < header_len:
            status[i] = MALFORMED | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        s_lo = _words(IPV4_MAPPED_WORD, read_u32(buf, pos + 12, HOST_BIG_ENDIAN))
        d_lo = _words(IPV4_MAPPED_WORD, read_u32(buf, pos + 16, HOST_BIG_ENDIAN))
        protocol = byte(buf, pos + 9)
        ip_proto[i] = protocol
        ip_total_len[i] = total
        fragment = read_u16(buf, pos + 6, True)
        if fragment & 0x1FFF:  # a later fragment: its bytes are not a transport header
            status[i] = FRAGMENT | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        if fragment & 0x2000:
            flags |= FRAGMENT
        ip_end = pos + min(total, wire_end - pos)
        pos += header_len
    else:
        ip_version[i] = 6
        if end - pos < 40:
            status[i] = TRUNCATED | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        if byte(buf, pos) >> 4 != 6:
            status[i] = MALFORMED | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        s_hi = _words(read_u32(buf, pos + 8, h), read_u32(buf, pos + 12, h))
        s_lo = _words(read_u32(buf, pos + 16, h), read_u32(buf, pos + 20, h))
        d_hi = _words(read_u32(buf, pos + 24, h), read_u32(buf, pos + 28, h))
        d_lo = _words(read_u32(buf, pos + 32, h), read_u32(buf, pos + 36, h))
        total = read_u16(buf, pos + 4, True) + 40
        ip_total_len[i] = total
        ip_end = pos + min(total, wire_end - pos)
        protocol, pos, fragment6 = _ipv6_extensions(buf, pos + 40, end, ip_end, byte(buf, pos + 6))
        if protocol < 0:
            status[i] = TRUNCATED | NOT_TCP if pos <= ip_end else MALFORMED | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        ip_proto[i] = protocol
        if fragment6 == 2:
            status[i] = FRAGMENT | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        if fragment6 == 1:
            flags |= FRAGMENT
    if protocol == IPPROTO_UDP:
        if end - pos < 8:
            status[i] = flags | TRUNCATED | NOT_TCP
            return s_hi, s_lo, d_hi, d_lo
        src_port[i] = read_u16(buf, pos, True)
        dst_port[i] = read_u16(buf, pos + 2, True)
        if src_port[i] == DNS_PORT or dst_port[i] == DNS_PORT:
            udp_payload[i] = pos + 8
        status[i] = flags | PARSED | NOT_TCP
        return s_hi, s_lo, d_hi, d_lo
    if protocol != IPPROTO_TCP:
        status[i] = flags | PARSED | NOT_TCP
        return s_hi, s_lo, d_hi, d_lo
    if end - pos < 20:
        if end - pos >= 4:
            src_port[i] = read_u16(buf, pos, True)
            dst_port[i] = read_u16(buf, pos + 2, True)
        status[i] = flags | TRUNCATED | NOT_TCP
        return s_hi, s_lo, d_hi, d_lo
    header_len = (byte(buf, pos + 12) >> 4) * 4
    src_port[i] = read_u16(buf, pos, True)
    dst_port[i] = read_u16(buf, pos + 2, True)
    tcp_seq[i] = read_u32(buf, pos + 4, True)
    tcp_ack[i] = read_u32(buf, pos + 8, True)
    tcp_flags[i] = ((byte(buf, pos + 12) & 1) << 8) | byte(buf, pos + 13)
    tcp_window[i] = read_u16(buf, pos + 14, True)
    tcp_hdr_len[i] = header_len
    if header_len < 20 or ip_end - pos < header_len:
        status[i] = flags | MALFORMED | NOT_TCP  # Wireshark: "Bogus TCP header length"
        return s_hi, s_lo, d_hi, d_lo
    tcp_payload_len[i] = ip_end - pos - header_len
    if header_len > 20:
        _tcp_options(
            buf, pos + 20, min(pos + header_len, end), i,
            mss, wscale, sack_perm, sack_count, sack_left, sack_right, has_ts, ts_val, ts_ecr,
        )  # fmt: skip
    if end < ip_end:
        flags |= TRUNCATED
    status[i] = flags | PARSED
    return s_hi, s_lo, d_hi, d_lo


@inline_kernel
def _address_id(
    hi: np.uint64, lo: np.uint64, slots: I64, keys: U64, cache_keys: U64, cache_ids: I64
) -> int:
    """The key's id from the two last found (a flow's packets go back and forth between two
    addresses), else from the table; -1 if the table does not have it yet."""
    for c in range(2):
        if cache_keys[c, 0] == hi and cache_keys[c, 1] == lo and cache_ids[c] >= 0:
            return int(cache_ids[c])
    k = find_address(slots, keys, hi, lo)
    if k >= 0:
        cache_keys[1, 0] = cache_keys[0, 0]
        cache_keys[1, 1] = cache_keys[0, 1]
        cache_ids[1] = cache_ids[0]
        cache_keys[0, 0] = hi
        cache_keys[0, 1] = lo
        cache_ids[0] = k
    return k


@parallel_kernel
def decode_packets(
    buf: U8, data_offset: I64, record_header: int, big: bool, nanoseconds: bool, if_link: U16,
    first_frame: int, frame: U32, ts_ns: I64, interface: U16, caplen: U32, origlen: U32,
    link_type: U16, status: U8, ip_version: U8, src_id: U32, dst_id: U32, ip_proto: U8,
    ip_total_len: U32, src_port: U16, dst_port: U16, tcp_seq: U32, tcp_ack: U32, tcp_flags: U16,
    tcp_window: U16, tcp_hdr_len: U8, tcp_payload_len: U32,
    mss: I32, wscale: I8, sack_perm: B, sack_count: U8, sack_left: U32, sack_right: U32,
    has_ts: B, ts_val: U32, ts_ecr: U32, udp_payload: I64,
    address_slots: I64, address_keys: U64, miss_count: I64, miss_row: I64, miss_key: U64,
) -> None:  # fmt: skip
    """Decode every record into its row (absent options: -1, others 0); SACK columns come zeroed.

    With ``record_header`` (pcap: 16), each packet's record header just before its bytes gives
    its timestamp and lengths (in the file's byte order ``big``); without (pcapng), the walker
    filled ``ts_ns``, ``caplen``, ``origlen`` and ``interface``. ``if_link`` maps an interface to
    its link type. ``udp_payload`` gets the buffer offset of UDP port-53 payloads (else 0), for
    the DNS pass. Addresses found in the ``addresses`` table get their id; the others are noted
    per part (``miss_*``, see ``addresses.resolve_misses``) and get their id after this call.
    """
    n = data_offset.shape[0]
    parts = miss_count.shape[0]
    for p in numba.prange(parts):  # rows are independent: parts run on all cores
        cache_keys = np.zeros((2, 2), np.uint64)
        cache_ids = np.zeros(2, np.int64)  # both entries: ::, id 0
        misses = 0
        for i in range(p * n // parts, (p + 1) * n // parts):
            frame[i] = first_frame + i
            if record_header:
                ts, captured, wire = pcap_record_header(
                    buf, data_offset[i] - record_header, big, nanoseconds
                )
                ts_ns[i] = ts
                caplen[i] = captured
                origlen[i] = wire
                interface[i] = 0
            link_type[i] = if_link[interface[i]]
            # every column of the row is written here (the reader allocates them uninitialised:
            # zeroing them in a separate pass cost more than these stores), except the SACK
            # ones, which come zeroed and are only written when a packet has them
            status[i] = 0
            ip_version[i] = 0
            ip_proto[i] = 0
            ip_total_len[i] = 0
            src_port[i] = 0
            dst_port[i] = 0
            tcp_seq[i] = 0
            tcp_ack[i] = 0
            tcp_flags[i] = 0
            tcp_window[i] = 0
            tcp_hdr_len[i] = 0
            tcp_payload_len[i] = 0
            mss[i] = -1
            wscale[i] = -1
            has_ts[i] = False
            ts_val[i] = 0
            ts_ecr[i] = 0
            udp_payload[i] = 0
            s_hi, s_lo, d_hi, d_lo = _decode_row(
                buf, i, data_offset, caplen, origlen, link_type, status, ip_version, ip_proto,
                ip_total_len, src_port, dst_port, tcp_seq, tcp_ack, tcp_flags, tcp_window,
                tcp_hdr_len, tcp_payload_len, mss, wscale, sack_perm, sack_count, sack_left,
                sack_right, has_ts, ts_val, ts_ecr, udp_payload,
            )  # fmt: skip
            k = _address_id(s_hi, s_lo, address_slots, address_keys, cache_keys, cache_ids)
            if k < 0:
                miss_row[p, misses] = 2 * i
                miss_key[p, misses, 0] = s_hi
                miss_key[p, misses, 1] = s_lo
                misses += 1
                k = 0
            src_id[i] = k
            k = _address_id(d_hi, d_lo, address_slots, address_keys, cache_keys, cache_ids)
            if k < 0:
                miss_row[p, misses] = 2 * i + 1
                miss_key[p, misses, 0] = d_hi
                miss_key[p, misses, 1] = d_lo
                misses += 1
                k = 0
            dst_id[i] = k
        miss_count[p] = misses
