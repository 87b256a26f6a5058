"""Group TCP packets into connection instances ("flows") and orient them client → server.

A conversation is the unordered pair of (address, port) endpoints. Within one conversation a
new connection instance starts, as in Wireshark's ``tcp.stream``, when a SYN (without ACK)
arrives whose sequence number differs from the ISN already recorded for that direction: the
port pair has been reused after a FIN/RST or a long idle. A retransmitted SYN (same ISN) stays
in the same flow. Flow ids follow each flow's first packet (DESIGN.md).

Wireshark's conversation table is a sequential state machine over the packets in capture
order, but almost every packet only looks its conversation up: the state (instance, base
sequence number of each direction) changes at few packets. So the work is split in three:

1. in parallel, each part of the capture (a range of PacketTable rows) gets its own small hash
   table of conversations and tags every packet with a local conversation number and its
   direction; it counts the packets of each local conversation and records the few packets
   where the state machine may change: every SYN or SYN/ACK, the first packet of each local
   conversation, and the first packet that can fix the other direction's base after one of
   those (see ``_part``);
2. serially, the state machine runs over those recorded packets only, part after part (so in
   capture order): it maps local conversations to global ones, starts flows, fixes the bases,
   and cuts each local conversation into pieces of one flow each — nearly always one piece;
3. in parallel, every packet is written to its place in the flow-major layout
   (:mod:`tcplens.tcp.grouping`): its piece's cursor for its direction in its flow's slice.

Running the state machine on a subsequence gives the same result as on all packets as long as
the subsequence holds every packet that changes the state: packets that start an instance are
a conversation's first packet or pure SYNs, and after an instance starts the only other
change is the first packet that fixes the other direction's base (Wireshark's base_seq), which
each part records for every local conversation still waiting for it.

The hash tables are keyed with a per-process random seed and grow with the number of
conversations (open addressing, load ≤ 1/2): memory follows the conversations, never more
than the packets, and crafted addresses cannot aim at one slot.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import (
    ACK,
    MALFORMED,
    MAX_SACK_BLOCKS,
    NOT_TCP,
    PARSED,
    SYN,
    UNSUPPORTED_LINK,
    PacketTable,
)
from tcplens.tcp.compiled import empty, kernel, parallel_kernel
from tcplens.tcp.grouping import FlowLayout, scatter_by_flow

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]
B = npt.NDArray[np.bool_]

# parts of the capture per thread for the parallel passes (equal row ranges; numba gives each
# thread a fixed block of them, see grouping.CHUNKS_PER_THREAD); each part rediscovers the
# conversations it sees, so not many
PARTS_PER_THREAD = 2
_NOT_TCP = NOT_TCP | MALFORMED | UNSUPPORTED_LINK
_NO_ROW = np.int64(2**62)  # "no later piece": beyond every row


@dataclass(frozen=True)
class FlowAssignment:
    """The flows of a capture's TCP packets: per-flow facts and the packets laid out by flow."""

    layout: FlowLayout  # the TCP packets grouped by flow and direction, in capture order
    client_from_syn: B  # per flow: the client was identified by a SYN or SYN/ACK
    first_row: I64  # per flow: PacketTable row of the flow's first packet
    isn_client: U32  # per flow: Wireshark's base sequence number of each direction
    isn_server: U32

    @property
    def n_flows(self) -> int:
        return int(self.first_row.shape[0])

    @property
    def n_packets(self) -> int:
        """Number of TCP packets."""
        return int(self.layout.rows.shape[0])


def assign_flows(packets: PacketTable, scratch: I32 | None = None) -> FlowAssignment:
    """Split the capture's TCP packets into flows (see module docstring).

    ``scratch`` is an int32 array of at least two values per PacketTable row that the passes
    may overwrite (the caller's work memory, so its pages are touched once for all its uses):
    the first half holds each row's tag while the flows are found, the second half the
    layout's rows (:attr:`FlowLayout.rows`), which the per-packet pass turns into
    :attr:`Segments.frame <tcplens.tcp.model.Segments.frame>` in place.
    """
    n_rows = len(packets)
    if scratch is None:
        scratch = empty(2 * n_rows, np.int32)
    tag = scratch[:n_rows]
    parts = max(1, min(n_rows, PARTS_PER_THREAD * numba.get_num_threads()))
    bounds = (np.arange(parts + 1, dtype=np.int64) * n_rows) // parts
    # per part, regions of these arrays starting at the part's first row: a part has at most
    # as many local conversations and recorded packets as rows; untouched pages cost nothing
    keys = empty(2 * n_rows, np.uint64).reshape(n_rows, 2)
    counts = empty(4 * n_rows, np.int32).reshape(n_rows, 4)
    event_row = empty(n_rows, np.int32)
    event_tag = empty(n_rows, np.int32)
    event_before = empty(4 * n_rows, np.int32).reshape(n_rows, 4)
    n_local = np.zeros(parts, np.int64)
    n_events = np.zeros(parts, np.int64)
    seed = np.uint64(int.from_bytes(os.urandom(8), "little"))
    _conversations(
        bounds,
        seed,
        packets.status,
        packets.ip_proto,
        packets.src_id,
        packets.dst_id,
        packets.src_port,
        packets.dst_port,
        packets.tcp_flags,
        packets.sack_count,
        tag,
        keys,
        counts,
        event_row,
        event_tag,
        event_before,
        n_local,
        n_events,
    )
    piece = empty(n_rows, np.int32)  # per local conversation: its first piece
    per_flow, offsets, sack_offsets, pieces = _instances(
        bounds,
        seed,
        n_local,
        n_events,
        keys,
        counts,
        event_row,
        event_tag,
        event_before,
        packets.tcp_seq,
        packets.tcp_ack,
        packets.tcp_flags,
        piece,
    )
    del keys, counts, event_row, event_tag, event_before
    first_row, client_from_syn, isn_client, isn_server = per_flow
    layout = scatter_by_flow(
        bounds, n_local, tag, piece, pieces, offsets, sack_offsets, scratch[n_rows : 2 * n_rows]
    )
    return FlowAssignment(
        layout=layout,
        client_from_syn=client_from_syn,
        first_row=first_row,
        isn_client=isn_client,
        isn_server=isn_server,
    )


@kernel
def _slot(k0, k1, seed):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Hash of a conversation key (two 48-bit endpoints), keyed with the process's seed."""
    h = (k0 ^ seed) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(32)
    h = (h ^ k1) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(29)
    return h


@kernel
def _rehash(keys, base, n, seed):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """A slot table (load ≤ 1/4 after growing) for the ``n`` keys at ``keys[base:]``."""
    size = 4
    while size < 4 * n:
        size *= 2
    slots = np.full(size, -1, np.int64)
    mask = np.uint64(size - 1)
    for k in range(n):
        s = _slot(keys[base + k, 0], keys[base + k, 1], seed) & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        slots[s] = k
    return slots


@kernel
def _find(slots, keys, base, k0, k1, seed):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Slot of key ``(k0, k1)``: its number in ``slots`` or the empty slot to put it in."""
    mask = np.uint64(slots.shape[0] - 1)
    s = _slot(k0, k1, seed) & mask
    while True:
        c = slots[s]
        if c < 0 or (keys[base + c, 0] == k0 and keys[base + c, 1] == k1):
            return s
        s = (s + np.uint64(1)) & mask


@parallel_kernel
def _conversations(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    bounds, seed, status, ip_proto, src, dst, src_port, dst_port, flags, sack_count,
    tag, keys, counts, event_row, event_tag, event_before, n_local, n_events,
):  # fmt: skip
    for p in numba.prange(bounds.shape[0] - 1):
        n_local[p], n_events[p] = _part(
            bounds[p], bounds[p + 1], seed, status, ip_proto, src, dst, src_port, dst_port,
            flags, sack_count, tag, keys, counts, event_row, event_tag, event_before,
        )  # fmt: skip


@kernel
def _part(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    lo, hi, seed, status, ip_proto, src, dst, src_port, dst_port, flags, sack_count,
    tag, keys, counts, event_row, event_tag, event_before,
):  # fmt: skip
    """Local conversations of rows ``lo:hi`` (step 1 of the module docstring).

    ``tag[r]`` = 2 × local conversation + direction (0: the packet's source is the lower
    endpoint), -1 for rows that are not TCP. ``counts[lo + c]``: packets of local conversation
    c per direction, then the SACK blocks of its ACKs per direction (Segments' SACK rows).
    Recorded packets: ``event_row``, their tag, and their conversation's counts before them.
    """
    slots = np.full(16, -1, np.int64)
    # per local conversation, bit d: an instance whose base for direction 1 - d is not fixed
    # yet may have started with a packet sent in direction d (before or in this part)
    waiting = np.empty(8, np.uint8)
    n_conv = 0
    n_event = 0
    r = lo
    while True:
        r = _skip_not_tcp(r, hi, status, ip_proto, tag)
        if r == hi:
            return n_conv, n_event
        k0, k1, _ = _key(r, src, dst, src_port, dst_port)
        s = _find(slots, keys, lo, k0, k1, seed)
        c = slots[s]
        created = c < 0
        if created:
            c = n_conv
            n_conv += 1
            keys[lo + c, 0] = k0
            keys[lo + c, 1] = k1
            _store(counts, lo + c, 0, 0, 0, 0)
            if c == waiting.shape[0]:
                grown = np.empty(2 * c, np.uint8)
                grown[:c] = waiting
                waiting = grown
            waiting[c] = 3
            if 2 * n_conv > slots.shape[0]:
                slots = _rehash(keys, lo, n_conv, seed)
            else:
                slots[s] = c
        r, w, n_event = _run(
            r, hi, lo, k0, k1, c, created, waiting[c], n_event, status, ip_proto, src, dst,
            src_port, dst_port, flags, sack_count, tag, counts, event_row, event_tag, event_before,
        )  # fmt: skip
        waiting[c] = w


@kernel
def _skip_not_tcp(r, hi, status, ip_proto, tag):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The first TCP row from ``r`` on (``hi`` if none); rows skipped get tag -1."""
    while r < hi:
        st = status[r]
        if (st & PARSED) != 0 and (st & _NOT_TCP) == 0 and ip_proto[r] == 6:
            return r
        tag[r] = -1
        r += 1
    return hi


@kernel
def _key(r, src, dst, src_port, dst_port):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Conversation key of row ``r`` (lower endpoint, higher endpoint) and its direction."""
    a = (np.uint64(src[r]) << np.uint64(16)) | np.uint64(src_port[r])
    b = (np.uint64(dst[r]) << np.uint64(16)) | np.uint64(dst_port[r])
    return min(a, b), max(a, b), np.int64(a > b)


@kernel
def _run(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    r, hi, lo, k0, k1, c, created, waiting, n_event, status, ip_proto, src, dst, src_port, dst_port,
    flags, sack_count, tag, counts, event_row, event_tag, event_before,
):  # fmt: skip
    """Rows from ``r`` on while they belong to local conversation ``c`` (key ``k0, k1``).

    Consecutive packets mostly belong to one conversation: they need no lookup, and its
    counts and waiting bits stay in registers (no arrays change size in this loop, so
    numba adds no reference counting to it). Returns the first row of another conversation.
    """
    j = lo + c
    w = np.int64(waiting)
    n0, n1, s0, s1 = counts[j, 0], counts[j, 1], counts[j, 2], counts[j, 3]
    while r < hi:
        st = status[r]
        if (st & PARSED) == 0 or (st & _NOT_TCP) != 0 or ip_proto[r] != 6:
            tag[r] = -1
            r += 1
            continue
        a, b, d = _key(r, src, dst, src_port, dst_port)
        if a != k0 or b != k1:
            break
        f = flags[r]
        if created or (f & SYN) != 0 or w != 0:
            # a packet fixes the base of its own direction, and with an ACK the other's
            fixes = (1 << (1 - d)) | ((1 << d) if (f & ACK) != 0 else 0)
            if created or (f & SYN) != 0 or (w & fixes) != 0:
                event_row[lo + n_event] = r
                event_tag[lo + n_event] = 2 * c + d
                _store(event_before, lo + n_event, n0, n1, s0, s1)
                n_event += 1
            w &= ~fixes
            if (f & SYN) != 0 and (f & ACK) == 0:
                w |= 1 << d  # a pure SYN may start an instance
            created = False
        # branch-free: directions and SACKs alternate unpredictably
        blocks = np.int64(min(sack_count[r], MAX_SACK_BLOCKS)) * np.int64((f & ACK) != 0)
        n0 += 1 - d
        n1 += d
        s0 += blocks * (1 - d)
        s1 += blocks * d
        tag[np.uint64(r)] = 2 * c + d  # unsigned index: no negative-index wraparound
        r += 1
    _store(counts, j, n0, n1, s0, s1)
    return r, w, n_event


@kernel
def _store(table, i, n0, n1, s0, s1):  # type: ignore[no-untyped-def]  # pragma: no cover
    table[i, 0] = n0
    table[i, 1] = n1
    table[i, 2] = s0
    table[i, 3] = s1


@kernel
def _grow(a, size):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    out = np.empty((size,) + a.shape[1:], a.dtype)  # noqa: RUF005 (numba: no starred tuples)
    out[: a.shape[0]] = a
    return out


@kernel
def _instances(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    bounds, seed, n_local, n_events, keys, counts, event_row, event_tag, event_before,
    seq, ack, flags, first_piece,
):  # fmt: skip
    """Wireshark's conversation state machine over the recorded packets (step 2).

    Returns the per-flow facts, the per-(flow, direction) offsets of all packets and of the
    ACKs' SACK blocks (client → server first), and the pieces: per piece its first row, the next
    piece of its local conversation (-1: none) and, per lower/higher endpoint direction, the
    piece's first position in the flow-major layout (:mod:`tcplens.tcp.grouping`: each flow's
    client → server packets, then its server → client ones). ``first_piece`` gets each local
    conversation's first piece.
    """
    cap = 64  # conversations
    slots = np.full(4 * cap, -1, np.int64)
    conv_keys = np.empty((cap, 2), np.uint64)
    conv_flow = np.empty(cap, np.int64)
    conv_base = np.zeros((cap, 2), np.uint32)
    conv_set = np.zeros((cap, 2), np.bool_)
    n_conv = 0
    flow_cap = 64
    first = np.empty(flow_cap, np.int64)
    first_d = np.empty(flow_cap, np.int64)
    base = np.zeros((flow_cap, 2), np.uint32)
    syn = np.empty(flow_cap, np.int64)  # first pure SYN, its direction
    syn_d = np.empty(flow_cap, np.int64)
    synack = np.empty(flow_cap, np.int64)  # first SYN/ACK
    synack_d = np.empty(flow_cap, np.int64)
    total = np.empty((flow_cap, 4), np.int64)  # per lower/higher direction, as ``counts``
    n_flow = 0
    piece_cap = 64
    piece_flow = np.empty(piece_cap, np.int64)
    piece_row = np.empty(piece_cap, np.int64)
    piece_next = np.empty(piece_cap, np.int64)
    piece_start = np.empty((piece_cap, 4), np.int64)  # counts of its conversation before it
    piece_at = np.empty((piece_cap, 2), np.int64)  # per direction: position in the layout
    n_piece = 0
    for p in range(bounds.shape[0] - 1):
        lo = bounds[p]
        local_conv = np.empty(n_local[p], np.int64)
        last_piece = np.full(n_local[p], -1, np.int64)
        for e in range(lo, lo + n_events[p]):
            r = event_row[e]
            c = event_tag[e] >> 1
            d = event_tag[e] & 1
            j = lo + c
            if last_piece[c] < 0:  # the local conversation's first packet
                s = _find(slots, conv_keys, 0, keys[j, 0], keys[j, 1], seed)
                g = slots[s]
                if g < 0:
                    if n_conv == cap:
                        cap *= 2
                        conv_keys = _grow(conv_keys, cap)
                        conv_flow = _grow(conv_flow, cap)
                        conv_base = _grow(conv_base, cap)
                        conv_set = _grow(conv_set, cap)
                    g = n_conv
                    n_conv += 1
                    conv_keys[g, 0] = keys[j, 0]
                    conv_keys[g, 1] = keys[j, 1]
                    conv_flow[g] = -1
                    if 2 * n_conv > slots.shape[0]:
                        slots = _rehash(conv_keys, 0, n_conv, seed)
                    else:
                        slots[s] = g
                local_conv[c] = g
            g = local_conv[c]
            f = flags[r]
            is_syn = (f & SYN) != 0
            pure_syn = is_syn and (f & ACK) == 0
            new_instance = conv_flow[g] < 0
            if pure_syn and conv_set[g, d] and seq[r] != conv_base[g, d]:
                new_instance = True  # port pair reused with a new ISN (Wireshark: reused_ports)
            if new_instance:
                if n_flow == flow_cap:
                    flow_cap *= 2
                    first = _grow(first, flow_cap)
                    first_d = _grow(first_d, flow_cap)
                    base = _grow(base, flow_cap)
                    syn = _grow(syn, flow_cap)
                    syn_d = _grow(syn_d, flow_cap)
                    synack = _grow(synack, flow_cap)
                    synack_d = _grow(synack_d, flow_cap)
                    total = _grow(total, flow_cap)
                first[n_flow] = r
                first_d[n_flow] = d
                base[n_flow, 0] = 0
                base[n_flow, 1] = 0
                syn[n_flow] = -1
                synack[n_flow] = -1
                total[n_flow, :] = 0
                conv_flow[g] = n_flow
                conv_set[g, 0] = False
                conv_set[g, 1] = False
                n_flow += 1
            if new_instance or last_piece[c] < 0:
                # the local conversation's packets from here on go to the current flow
                if n_piece == piece_cap:
                    piece_cap *= 2
                    piece_flow = _grow(piece_flow, piece_cap)
                    piece_row = _grow(piece_row, piece_cap)
                    piece_next = _grow(piece_next, piece_cap)
                    piece_start = _grow(piece_start, piece_cap)
                    piece_at = _grow(piece_at, piece_cap)
                q = last_piece[c]
                if q < 0:
                    first_piece[j] = n_piece
                else:
                    piece_next[q] = n_piece
                    _close(q, event_before[e], piece_flow, piece_start, piece_at, total)
                piece_flow[n_piece] = conv_flow[g]
                piece_row[n_piece] = r
                piece_next[n_piece] = -1
                piece_start[n_piece, :] = event_before[e, :]
                last_piece[c] = n_piece
                n_piece += 1
            fl = conv_flow[g]
            # Wireshark's base_seq: ISN from the SYN, else first seq - 1; the reverse ISN from
            # the first ACK seen if that direction has not sent yet (ack - 1).
            if not conv_set[g, d]:
                conv_base[g, d] = seq[r] if is_syn else seq[r] - np.uint32(1)
                conv_set[g, d] = True
                base[fl, d] = conv_base[g, d]
            if not conv_set[g, 1 - d] and (f & ACK) != 0:
                conv_base[g, 1 - d] = ack[r] - np.uint32(1)
                conv_set[g, 1 - d] = True
                base[fl, 1 - d] = conv_base[g, 1 - d]
            if pure_syn and syn[fl] < 0:
                syn[fl] = r
                syn_d[fl] = d
            if is_syn and not pure_syn and synack[fl] < 0:
                synack[fl] = r
                synack_d[fl] = d
        for c in range(n_local[p]):  # the part's last piece of each local conversation
            _close(last_piece[c], counts[lo + c], piece_flow, piece_start, piece_at, total)
    # Client: sender of the first pure SYN, else receiver of the first SYN/ACK, else the first
    # sender (DESIGN.md). ``flip``: 1 if the client is the higher endpoint.
    first_row = first[:n_flow].copy()
    client_from_syn = np.empty(n_flow, np.bool_)
    isn_client = np.empty(n_flow, np.uint32)
    isn_server = np.empty(n_flow, np.uint32)
    flip = np.empty(n_flow, np.int64)
    offsets = np.zeros(2 * n_flow + 1, np.int64)
    sack_offsets = np.zeros(2 * n_flow + 1, np.int64)
    for fl in range(n_flow):
        client_from_syn[fl] = syn[fl] >= 0 or synack[fl] >= 0
        if syn[fl] >= 0:
            x = syn_d[fl]
        elif synack[fl] >= 0:
            x = 1 - synack_d[fl]
        else:
            x = first_d[fl]
        flip[fl] = x
        isn_client[fl] = base[fl, x]
        isn_server[fl] = base[fl, 1 - x]
        for k in range(2):
            offsets[2 * fl + k + 1] = offsets[2 * fl + k] + total[fl, x ^ k]
            sack_offsets[2 * fl + k + 1] = sack_offsets[2 * fl + k] + total[fl, 2 + (x ^ k)]
    for q in range(n_piece):
        fl = piece_flow[q]
        for k in range(2):  # lower/higher endpoint direction k is the flow's direction k ^ flip
            piece_at[q, k] += offsets[2 * fl + (k ^ flip[fl])]
    return (
        (first_row, client_from_syn, isn_client, isn_server),
        offsets,
        sack_offsets,
        (piece_row[:n_piece].copy(), piece_next[:n_piece].copy(), piece_at[:n_piece].copy()),
    )  # fmt: skip


@kernel
def _close(q, before, piece_flow, piece_start, piece_at, total):  # type: ignore[no-untyped-def]  # pragma: no cover
    """End piece ``q`` where its conversation had ``before`` packets: add them to its flow.
    The piece's packets of each direction come after the flow's earlier ones of that direction."""
    fl = piece_flow[q]
    piece_at[q, 0] = total[fl, 0]
    piece_at[q, 1] = total[fl, 1]
    for k in range(4):
        total[fl, k] += before[k] - piece_start[q, k]
