"""The compiled pass over packet records: each record's headers into its row, on all cores.

One loop over the records of a buffer, writing each field straight into its column: the headers
(``headers``: the common shape's straight path, else the general parser), then the TCP options,
then the addresses' ids.
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.capture.addresses import U64, find_address
from tcplens.capture.clock import is_step
from tcplens.capture.compiled import (
    WORKERS,
    byte,
    in_turn,
    inline_kernel,
    parallel_kernel,
    read_u16,
    read_u32,
)
from tcplens.capture.headers import decode_row, ethernet_ipv4_tcp
from tcplens.capture.link import LINKTYPE_ETHERNET
from tcplens.capture.pcap import record_header as pcap_record_header
from tcplens.capture.table import (
    I8,
    I32,
    I64,
    LONG_LENGTH,
    MAX_SACK_BLOCKS,
    OPTION_TIMESTAMPS,
    U8,
    U16,
    U32,
    B,
)
from tcplens.capture.undecoded import UNDECODED_SLOTS

TCPOPT_EOL = 0
TCPOPT_NOP = 1
TCPOPT_MSS = 2
TCPOPT_WSCALE = 3
TCPOPT_SACK_PERM = 4
TCPOPT_SACK = 5
TCPOPT_TIMESTAMP = 8
ALIGNED_TIMESTAMPS = 0x0101080A  # NOP, NOP, kind 8, length 10
ALIGNED_SACK = 0x010105  # NOP, NOP, kind 5 (then the length)


@inline_kernel
def _tcp_options(
    buf: U8, pos: int, stop: int, i: np.uint64, row: int, hw: int, sw: int,
    tcp_options: U8, ts_val: U32, ts_ecr: U32,
    hs_row: U32, hs_mss: I32, hs_wscale: I8, hs_sack_perm: B,
    block_row: U32, block_left: U32, block_right: U32,
) -> tuple[int, int]:  # fmt: skip
    """Options in ``buf[pos:stop]`` (RFC 9293 §3.1); a malformed one ends this packet's parse.

    Row ``i`` of the chunk is row ``row`` of the table. SYN options go to the handshake entry at
    ``hw`` (written if the packet has any), SACK blocks to the block entries from ``sw``; returns
    the next free ``(hw, sw)``.
    """
    mss = -1
    wscale = -1
    sack_perm = False
    count = 0
    while pos < stop:
        kind = byte(buf, pos)
        if kind == TCPOPT_EOL:
            break
        if kind == TCPOPT_NOP:
            pos += 1
            continue
        if stop - pos < 2:
            break
        length = byte(buf, pos + 1)
        if length < 2 or stop - pos < length:
            break
        if kind == TCPOPT_MSS and length == 4:
            mss = read_u16(buf, pos + 2, True)
        elif kind == TCPOPT_WSCALE and length == 3:
            wscale = min(byte(buf, pos + 2), 127)
        elif kind == TCPOPT_SACK_PERM and length == 2:
            sack_perm = True
        elif kind == TCPOPT_SACK and (length - 2) % 8 == 0:
            count = min((length - 2) // 8, MAX_SACK_BLOCKS)  # a later SACK option replaces
            for j in range(count):
                block_row[sw + j] = row
                block_left[sw + j] = read_u32(buf, pos + 2 + 8 * j, True)
                block_right[sw + j] = read_u32(buf, pos + 6 + 8 * j, True)
            tcp_options[i] = (tcp_options[i] & OPTION_TIMESTAMPS) | count
        elif kind == TCPOPT_TIMESTAMP and length == 10:
            tcp_options[i] |= OPTION_TIMESTAMPS
            ts_val[i] = read_u32(buf, pos + 2, True)
            ts_ecr[i] = read_u32(buf, pos + 6, True)
        pos += length
    if mss >= 0 or wscale >= 0 or sack_perm:
        hs_row[hw] = row
        hs_mss[hw] = mss
        hs_wscale[hw] = wscale
        hs_sack_perm[hw] = sack_perm
        hw += 1
    return hw, sw + count


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


@inline_kernel
def _count_undecoded(undecoded: I64, p: int, kinds: int, unknown: int) -> int:
    """Count one packet of kind ``unknown`` in part ``p``'s table; returns its kinds now."""
    for j in range(kinds):
        if undecoded[p, j, 0] == unknown:
            undecoded[p, j, 1] += 1
            return kinds
    if kinds < UNDECODED_SLOTS - 1:
        undecoded[p, kinds, 0] = unknown
        undecoded[p, kinds, 1] = 1
        return kinds + 1
    undecoded[p, UNDECODED_SLOTS - 1, 1] += 1
    return kinds


@parallel_kernel
def decode_packets(
    buf: U8, data_offset: I64, part_first: I64, part_pos: I64, record_header: int, big: bool, nanoseconds: bool, if_link: U16,
    first_row: int, ts_ns: I64, interface: U16, walked_caplen: U32, walked_origlen: U32,
    link_type: U16, status: U8, ip_version: U8, src_id: U32, dst_id: U32, ip_proto: U8,
    caplen16: U16, origlen16: U16,
    src_port: U16, dst_port: U16, tcp_seq: U32, tcp_ack: U32, tcp_flags: U16,
    tcp_window: U16, tcp_hdr_len: U8, tcp_payload_len16: U16, tcp_options: U8,
    ts_val: U32, ts_ecr: U32, ip_id: U16, tcp_checksum: U16, ts_bounds: I64,
    steps: I64, before_ns: int, dns_count: I64, dns_row: I64, dns_payload: I64, dns_end: I64,
    address_slots: I64, address_keys: U64, miss_count: I64, miss_row: I64, miss_key: U64,
    hs_fill: int, hs_row: U32, hs_mss: I32, hs_wscale: I8, hs_sack_perm: B,
    block_fill: int, block_row: U32, block_left: U32, block_right: U32,
    long_fill: int, long_row: U32, long_caplen: U32, long_origlen: U32, long_payload: U32,
    tunnel_fill: int, tunnel_row: U32, tunnel_layers: U16, undecoded: I64, undecoded_n: I64,
) -> tuple[int, int, int, int]:  # fmt: skip
    """Decode every record into its row of the zero-filled columns (absent fields stay 0).

    Rows ``part_first[p]`` to ``part_first[p + 1]`` are part ``p``; the parts run on all cores,
    numba's worker threads each taking the next part not taken yet (``take_next``): a worker
    whose core is shared (with another thread or process) takes fewer.
    In two fixed halves, the chunk waited for the slower one (bulk_5M, with the workers pinned
    to their cores by ``tcplens analyze``: the decoding 138-202 → 107-154 ms, 6 rounds each).
    ``data_offset[u]`` is where row ``i``'s bytes start; with ``part_pos`` (a pcap walked by
    ``pcap_walk``), it is written here instead: part ``p``'s first record header is at
    ``part_pos[p]`` and each record's length gives the next (read anyway for the row).
    With ``record_header`` (pcap: 16), each packet's record header just before its bytes gives
    its timestamp and lengths (in the file's byte order ``big``), and its link type is
    ``if_link[0]`` (``interface``/``link_type`` are not written); without (pcapng), the walker
    filled ``ts_ns``, ``interface`` and the lengths ``walked_caplen``/``walked_origlen``, and
    ``if_link`` maps an interface to the ``link_type`` written. Row ``i`` is row
    ``first_row + i`` of the table. Part ``p``'s ``dns_count[p]`` UDP port-53 packets, for the
    DNS pass: their rows ``dns_row[p]``, where their payload starts and their frame ends
    (``dns_payload[p]``, ``dns_end[p]``, buffer offsets). ``ts_bounds[p]``:
    the earliest and latest timestamp of part ``p`` (the capture's first and last packet times
    without another pass over ``ts_ns``). The clock's steps (``clock.is_step``) between a row
    and the one before it (for row 0, a row of time ``before_ns`` if ``first_row`` > 0), per
    part: ``steps[p, 1]`` 1 if at the part's first row, else 0, ``steps[p, 0]`` how many at
    its other rows, which (table rows) are ``steps[p, 2:]`` (``clock.steps_of_parts``).
    Addresses found in the ``addresses`` table get their id; the others are noted per part
    (``miss_*``, see ``addresses.resolve_misses``) and get their id after this call.

    SYN options, SACK blocks and long lengths (a length ≥ ``LONG_LENGTH``, whose 16-bit column
    holds ``LONG_LENGTH``; the payload length too, which only such a frame can reach) are appended to the handshake entries after the first ``hs_fill``, to
    the block entries after the first ``block_fill`` and to the long entries after the first
    ``long_fill``, in row order; returns their new counts. The arrays must have room for one
    handshake entry, MAX_SACK_BLOCKS blocks and one long entry per row: each part writes from
    its first row's share of that room, then the parts' entries are moved down to follow each
    other (a copy of the few rows that have them). So are the tunnel entries, after the first
    ``tunnel_fill``: the row and the ``ENCAP_*`` bits of each packet that came through a tunnel.

    What was not decoded (``decode_row``'s last value), per part: ``undecoded_n[p]`` different
    kinds, ``undecoded[p, j]`` = (kind, count), the kinds beyond ``UNDECODED_SLOTS - 1`` counted
    together in the last slot, as kind -1.
    """
    parts = part_first.shape[0] - 1
    walking = part_pos.shape[0] > 0
    hs_count = np.zeros(parts, np.int64)
    block_count = np.zeros(parts, np.int64)
    long_count = np.zeros(parts, np.int64)
    tunnel_count = np.zeros(parts, np.int64)
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # rows are independent: on all cores
        for p in in_turn(taken, parts):
            cache_keys = np.zeros((2, 2), np.uint64)
            cache_ids = np.zeros(2, np.int64)  # both entries: ::, id 0
            misses = 0
            lo = part_first[p]
            hw = hs_fill + lo
            sw = block_fill + MAX_SACK_BLOCKS * lo
            lw = long_fill + lo
            tw = tunnel_fill + lo
            kinds = 0
            undecoded[p, UNDECODED_SLOTS - 1, 0] = -1
            undecoded[p, UNDECODED_SLOTS - 1, 1] = 0
            pos = part_pos[p] if walking else 0
            dns = 0
            earliest = 0x7FFFFFFFFFFFFFFF
            latest = -0x7FFFFFFFFFFFFFFF - 1
            stepped = 0
            before = 0  # the previous row's time
            for i in range(lo, part_first[p + 1]):
                u = np.uint64(i)  # an unsigned index: no negative-index wraparound on each store
                if record_header:
                    if walking:
                        data_offset[u] = pos + record_header
                    ts, captured, wire = pcap_record_header(
                        buf, data_offset[u] - record_header, big, nanoseconds
                    )
                    pos = data_offset[u] + captured
                    ts_ns[u] = ts
                    link = if_link[0]
                else:
                    ts = ts_ns[u]
                    captured = walked_caplen[u]
                    wire = walked_origlen[u]
                    link = if_link[interface[u]]
                    link_type[u] = link
                earliest = min(earliest, ts)
                latest = max(latest, ts)
                if i > lo and is_step(ts - before):
                    steps[p, 2 + stepped] = first_row + i
                    stepped += 1
                before = ts
                # the columns come zero-filled (fresh anonymous memory, each row decoded once): only
                # what the packet has is written
                common = False
                payload = 0  # in full, from decode_row (the fast path's fits its column)
                layers = unknown = 0
                if link == LINKTYPE_ETHERNET:
                    common, s_lo, d_lo, options, stop = ethernet_ipv4_tcp(
                        buf, u, data_offset[u], captured, wire, status, ip_version, ip_proto,
                        src_port, dst_port, tcp_seq, tcp_ack, tcp_flags, tcp_window,
                        tcp_hdr_len, tcp_payload_len16, ip_id, tcp_checksum,
                    )  # fmt: skip
                    s_hi = d_hi = np.uint64(0)
                    dns_at = 0
                if not common:
                    s_hi, s_lo, d_hi, d_lo, options, stop, dns_at, payload, layers, unknown = decode_row(
                        buf, u, data_offset[u], captured, wire, link, status, ip_version, ip_proto,
                        src_port, dst_port, tcp_seq, tcp_ack, tcp_flags, tcp_window,
                        tcp_hdr_len, tcp_payload_len16, ip_id, tcp_checksum,
                    )  # fmt: skip
                if layers:
                    tunnel_row[tw] = first_row + i
                    tunnel_layers[tw] = layers
                    tw += 1
                if unknown:
                    kinds = _count_undecoded(undecoded, p, kinds, unknown)
                if dns_at:
                    dns_row[p, dns] = i
                    dns_payload[p, dns] = dns_at
                    dns_end[p, dns] = data_offset[u] + captured
                    dns += 1
                caplen16[u] = min(captured, LONG_LENGTH)
                origlen16[u] = min(wire, LONG_LENGTH)
                if captured >= LONG_LENGTH or wire >= LONG_LENGTH:
                    long_row[lw] = first_row + i
                    long_caplen[lw] = captured
                    long_origlen[lw] = wire
                    short = tcp_payload_len16[u]
                    long_payload[lw] = short if short < LONG_LENGTH else payload
                    lw += 1
                if stop - options >= 12 and read_u32(buf, options, True) == ALIGNED_TIMESTAMPS:
                    # what Linux and most stacks send (RFC 7323 Appendix A): NOP, NOP, timestamps
                    tcp_options[u] = OPTION_TIMESTAMPS  # the first option written
                    ts_val[u] = read_u32(buf, options + 4, True)
                    ts_ecr[u] = read_u32(buf, options + 8, True)
                    options += 12
                if (
                    stop - options >= 12
                    and read_u32(buf, options, True) >> 8 == ALIGNED_SACK
                    and byte(buf, options + 3) == stop - options - 2
                    and (stop - options - 4) % 8 == 0
                ):  # then NOP, NOP, SACK to the end of the header: what Linux sends during recovery
                    count = min((stop - options - 4) // 8, MAX_SACK_BLOCKS)
                    for j in range(count):
                        e = np.uint64(sw + j)  # unsigned: no negative-index select per store
                        block_row[e] = first_row + i
                        block_left[e] = read_u32(buf, options + 4 + 8 * j, True)
                        block_right[e] = read_u32(buf, options + 8 + 8 * j, True)
                    tcp_options[u] |= count
                    sw += count
                    options = stop
                if options < stop:
                    hw, sw = _tcp_options(
                        buf, options, stop, u, first_row + i, hw, sw, tcp_options, ts_val,
                        ts_ecr, hs_row, hs_mss, hs_wscale, hs_sack_perm,
                        block_row, block_left, block_right,
                    )  # fmt: skip
                k = _address_id(s_hi, s_lo, address_slots, address_keys, cache_keys, cache_ids)
                if k < 0:
                    miss_row[p, misses] = 2 * i
                    miss_key[p, misses, 0] = s_hi
                    miss_key[p, misses, 1] = s_lo
                    misses += 1
                    k = 0
                src_id[u] = k
                k = _address_id(d_hi, d_lo, address_slots, address_keys, cache_keys, cache_ids)
                if k < 0:
                    miss_row[p, misses] = 2 * i + 1
                    miss_key[p, misses, 0] = d_hi
                    miss_key[p, misses, 1] = d_lo
                    misses += 1
                    k = 0
                dst_id[u] = k
            miss_count[p] = misses
            dns_count[p] = dns
            hs_count[p] = hw - (hs_fill + lo)
            block_count[p] = sw - (block_fill + MAX_SACK_BLOCKS * lo)
            long_count[p] = lw - (long_fill + lo)
            tunnel_count[p] = tw - (tunnel_fill + lo)
            undecoded_n[p] = kinds
            ts_bounds[p, 0] = earliest
            ts_bounds[p, 1] = latest
            steps[p, 0] = stepped
    for q in range(parts):  # each part's first row, against the row before it
        lo = part_first[q]
        before = ts_ns[lo - 1] if lo > 0 else before_ns
        first = lo < part_first[q + 1] and (lo > 0 or first_row > 0)  # a row, after another
        steps[q, 1] = 1 if first and is_step(ts_ns[lo] - before) else 0
    hs_next = hs_fill
    block_next = block_fill
    long_next = long_fill
    tunnel_next = tunnel_fill
    for q in range(parts):  # the parts' entries, one after the other (moving down: in order)
        # unsigned indices: with signed ones numba selects per element for negative indices,
        # which keeps LLVM from vectorising these copies (1.3 -> 0.4 ns/packet on bulk)
        part_start = part_first[q]
        src = np.uint64(hs_fill + part_start)
        dst = np.uint64(hs_next)
        for j in range(np.uint64(hs_count[q])):
            hs_row[dst + j] = hs_row[src + j]
            hs_mss[dst + j] = hs_mss[src + j]
            hs_wscale[dst + j] = hs_wscale[src + j]
            hs_sack_perm[dst + j] = hs_sack_perm[src + j]
        hs_next += hs_count[q]
        src = np.uint64(block_fill + MAX_SACK_BLOCKS * part_start)
        dst = np.uint64(block_next)
        for j in range(np.uint64(block_count[q])):
            block_row[dst + j] = block_row[src + j]
            block_left[dst + j] = block_left[src + j]
            block_right[dst + j] = block_right[src + j]
        block_next += block_count[q]
        src = np.uint64(long_fill + part_start)
        dst = np.uint64(long_next)
        for j in range(np.uint64(long_count[q])):
            long_row[dst + j] = long_row[src + j]
            long_caplen[dst + j] = long_caplen[src + j]
            long_origlen[dst + j] = long_origlen[src + j]
            long_payload[dst + j] = long_payload[src + j]
        long_next += long_count[q]
        src = np.uint64(tunnel_fill + part_start)
        dst = np.uint64(tunnel_next)
        for j in range(np.uint64(tunnel_count[q])):
            tunnel_row[dst + j] = tunnel_row[src + j]
            tunnel_layers[dst + j] = tunnel_layers[src + j]
        tunnel_next += tunnel_count[q]
    return hs_next, block_next, long_next, tunnel_next
