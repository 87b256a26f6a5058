"""Packets captured twice: the later copy is recognised, counted in one warning, not analysed.

A capture taken on several interfaces at once (``tcpdump -i any`` on a host that bridges or
routes, a SPAN port fed from both sides of a link, a mirror that sends both the tunnelled and
the decapsulated packet) holds each packet that crossed two of them twice. Wireshark has no rule
for this: its TCP analysis calls the second copy a retransmission (or a duplicate ACK, an
out-of-order segment), so a clean transfer looks lossy. Its tool for it is ``editcap -d``, which
drops a frame whose MD5 over the frame's bytes equals one of the 5 frames before it (``-D N``:
N frames, ``-w S``: within S seconds; editcap.c, ``DEFAULT_DUP_DEPTH`` 5). tcpdump and the
kernel's capture have nothing of the kind.

A copy here is a TCP packet (the innermost one: a copy captured tunnelled and bare, or routed,
with another TTL or link header, still is one; editcap's hash of the whole frame misses those)
that has, within ``COPY_WINDOW_NS`` before it, a packet with the same addresses, ports, sequence
and acknowledgment numbers, flags, window, payload length, TCP timestamp value, TCP checksum
(over the payload too: the same bytes) and IPv4 identification. The identification is what a
resend does not repeat: RFC 6864 §4.1, a source gives each datagram it sends its own value
within the time the datagram may live, and stacks that number every packet (Linux per
connection, Windows per host) give a retransmission a new one. So a packet whose
identification is 0 is never called a copy: RFC 6864 §4.1 lets a source send 0 in every
atomic (DF, unfragmented) datagram, and then a resend of the same bytes looks the same (the
real-world corpus has such resends 50 ms to seconds apart). IPv6 has no identification: there
the checksum and the window stand alone, and a resend within ``COPY_WINDOW_NS`` whose bytes
are all the same (no TCP timestamps, nothing acknowledged in between) would be taken as a copy;
the window is kept short for that.

The first packet stays the one analysed; each later copy gets the ``COPY`` status bit, which
the TCP analysis skips as it skips packets that are not TCP (no event, no RTT sample, no bytes).
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.capture import table
from tcplens.capture.compiled import WORKERS, in_turn, parallel_kernel
from tcplens.capture.table import I64, U8, U16, U32, PacketTable

# How far apart two copies of one packet may be captured. Copies seen in the real-world corpus
# were at most 12.5 ms apart (ndpi_psiphon3: every packet twice), nearly all within 2 ms; a
# resend comes after a retransmission timeout (>= 200 ms in Linux, 1 s in RFC 6298) or a round
# trip of duplicate ACKs.
COPY_WINDOW_NS = 50_000_000
# The rows are marked in parts of PART_ROWS, on all cores, each part with its own table of recent
# packets, first filled with the rows just before the part (at most SEED_ROWS of them, back to
# 2 COPY_WINDOW_NS before the part's first packet: a copy's original is found across a part's
# start as within it, unless more than SEED_ROWS packets came between them)
PART_ROWS = 1 << 16
SEED_ROWS = 1 << 14
# buckets of a part's table (a power of two), of WAYS entries each (the hash of a packet's fields
# and its row): a packet is found again unless WAYS later packets hashed to its bucket in between
# (2^13 buckets: 2^11 were faster, but a copy 2,000 packets after its original, 12.5 ms at
# 160k packets/s, would then be missed 2 % of the time)
BUCKET_BITS = 13
WAYS = 4
NAMED_FRAMES = 5  # frames of copies named in the warning

_TCP_MASK = int(table.PARSED | table.NOT_TCP | table.MALFORMED | table.UNSUPPORTED_LINK)
_PARSED = int(table.PARSED)
_COPY = int(table.COPY)
_MIX = np.uint64(0x9E3779B97F4A7C15)  # 2^64 / golden ratio (Fibonacci hashing)


@parallel_kernel
def _mark_copies(
    ts_ns: I64, status: U8, ip_version: U8, src_id: U32, dst_id: U32, src_port: U16,
    dst_port: U16, tcp_seq: U32, tcp_ack: U32, tcp_flags: U16, tcp_window: U16,
    payload16: U16, ts_val: U32, ip_id: U16, tcp_checksum: U16, window_ns: int,
    counts: I64, named: I64,
) -> None:  # fmt: skip
    """Set ``COPY`` on every TCP packet that repeats one captured at most ``window_ns`` before
    it (see the module doc); part ``p``'s number of copies goes to ``counts[p]``, their first
    rows to ``named[p]`` (``counts.shape[0]`` parts of ``PART_ROWS``).

    A part's table (``2^BUCKET_BITS`` buckets of ``WAYS`` entries: ``keys``, the hash of a
    packet's fields, and ``rows``, -1 when free) holds, per hash, the last rows that had it (a
    row replaces the oldest of its bucket, or the packet it is a copy of): one bucket per
    packet, in capture order; a row of another hash is passed over without reading its columns.
    Indices are unsigned: numba adds no negative-index wraparound to each access.
    """
    n = ts_ns.shape[0]
    parts = counts.shape[0]
    top = np.uint64(64 - BUCKET_BITS)
    ways = np.uint64(WAYS)
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # parts are independent: on all cores
        for p in in_turn(taken, parts):
            keys = np.empty(WAYS << BUCKET_BITS, np.uint64)
            rows = np.full(WAYS << BUCKET_BITS, -1, np.int64)
            lo = p * PART_ROWS
            hi = min(n, lo + PART_ROWS)
            first = lo  # the rows before the part that its first packets may repeat
            while (
                first > 0 and lo - first < SEED_ROWS
                and ts_ns[first - 1] >= ts_ns[lo] - 2 * window_ns
            ):  # fmt: skip
                first -= 1
            copies = 0
            for i in range(first, hi):
                u = np.uint64(i)
                if (status[u] & _TCP_MASK) != _PARSED or (ip_version[u] == 4 and ip_id[u] == 0):
                    continue
                h = np.uint64(src_id[u]) << np.uint64(32) | np.uint64(dst_id[u])
                h = (h ^ (np.uint64(tcp_seq[u]) << np.uint64(32) | np.uint64(tcp_ack[u]))) * _MIX
                h = (h ^ (np.uint64(ip_id[u]) << np.uint64(16) | np.uint64(tcp_checksum[u]))) * _MIX
                h = (h ^ (np.uint64(src_port[u]) << np.uint64(16) | np.uint64(dst_port[u]))) * _MIX
                b = (h >> top) * ways
                way = b  # the oldest row of the bucket (-1: a free way), or the one i repeats
                for w in range(b, b + ways):
                    j = rows[w]
                    if j < rows[way]:
                        way = np.uint64(w)  # (w is one: for mypy)
                    if keys[w] != h or j < 0:
                        continue
                    v = np.uint64(j)
                    if (
                        abs(ts_ns[u] - ts_ns[v]) <= window_ns
                        and src_id[u] == src_id[v] and dst_id[u] == dst_id[v]
                        and src_port[u] == src_port[v] and dst_port[u] == dst_port[v]
                        and tcp_seq[u] == tcp_seq[v] and tcp_ack[u] == tcp_ack[v]
                        and tcp_flags[u] == tcp_flags[v] and tcp_window[u] == tcp_window[v]
                        and payload16[u] == payload16[v] and ts_val[u] == ts_val[v]
                        and ip_id[u] == ip_id[v] and tcp_checksum[u] == tcp_checksum[v]
                        and ip_version[u] == ip_version[v]
                    ):  # fmt: skip
                        if i >= lo:  # (a row before the part is its own part's to mark)
                            status[u] |= _COPY
                            if copies < named.shape[1]:
                                named[p, copies] = i
                            copies += 1
                        way = np.uint64(w)  # (w is one: for mypy)
                        break
                keys[way] = h
                rows[way] = i
            counts[p] = copies


def mark_copies(packets: PacketTable) -> str | None:
    """Mark the later copy of each TCP packet captured twice (``COPY`` in ``packets.status``);
    returns the capture warning that counts them, or None when there is none."""
    parts = -(-len(packets) // PART_ROWS)
    counts = np.zeros(parts, np.int64)
    named = np.empty((parts, NAMED_FRAMES), np.int64)
    _mark_copies(
        packets.ts_ns, packets.status, packets.ip_version, packets.src_id, packets.dst_id,
        packets.src_port, packets.dst_port, packets.tcp_seq, packets.tcp_ack, packets.tcp_flags,
        packets.tcp_window, packets.tcp_payload_len16, packets.ts_val, packets.ip_id,
        packets.tcp_checksum, COPY_WINDOW_NS, counts, named,
    )  # fmt: skip
    copies = int(counts.sum())
    if copies == 0:
        return None
    first = [r for p in range(parts) for r in named[p, : min(counts[p], NAMED_FRAMES)].tolist()]
    tcp = int(np.count_nonzero((packets.status & np.uint8(_TCP_MASK)) == _PARSED))  # and copies
    return copies_warning(copies, tcp, [r + 1 for r in first[:NAMED_FRAMES]])


def copies_warning(copies: int, tcp_packets: int, frames: list[int]) -> str:
    """The words for ``copies`` copies among ``tcp_packets`` TCP packets, the first ``frames``.

    >>> copies_warning(3, 6, [2, 4, 6])
    'Every TCP packet appears 2× (captured on several interfaces?): the 3 copies (frames 2, 4, 6) are left out of the analysis.'
    >>> copies_warning(2, 100, [7, 9])
    '2 TCP packets were captured twice (frames 7, 9: each the same bytes as a packet just before it, same IP identification and TCP checksum); the copies are left out of the analysis.'
    """
    first = ", ".join(str(f) for f in frames) + (", …" if copies > len(frames) else "")
    originals = tcp_packets - copies
    if copies >= 0.9 * originals:  # (nearly) every packet has its copies
        times = round(tcp_packets / originals)
        return (
            f"Every TCP packet appears {times}× (captured on several interfaces?): the "
            f"{copies:,} copies (frames {first}) are left out of the analysis."
        )
    if copies == 1:
        return (
            f"1 TCP packet was captured twice (frame {first}: the same bytes as a packet just "
            "before it, same IP identification and TCP checksum); the copy is left out of the "
            "analysis."
        )
    return (
        f"{copies:,} TCP packets were captured twice (frames {first}: each the same bytes as a "
        "packet just before it, same IP identification and TCP checksum); the copies are left "
        "out of the analysis."
    )
