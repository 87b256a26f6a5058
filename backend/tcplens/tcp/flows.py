"""Group TCP packets into connection instances ("flows") and orient them client → server.

A conversation is the unordered pair of (address, port) endpoints. Within one conversation a
new connection instance starts, as in Wireshark's ``tcp.stream``, when a SYN (without ACK)
arrives whose sequence number differs from the ISN already recorded for that direction: the
port pair has been reused after a FIN/RST or a long idle. A retransmitted SYN (same ISN) stays
in the same flow.

Assigning ids in first-seen order while tracking each conversation's per-direction ISN is a
sequential state machine over the packets in capture order (Wireshark's conversation table),
so it is one compiled pass with an open-addressing hash table over the endpoint pair: O(n),
and the ids come out in order of each flow's first packet, as DESIGN.md requires.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import (
    MALFORMED,
    NOT_TCP,
    PARSED,
    UNSUPPORTED_LINK,
    PacketTable,
)
from tcplens.tcp.compiled import kernel

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
B = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class FlowAssignment:
    """Which flow each TCP packet belongs to, and which way it travels.

    ``rows`` are the PacketTable rows that are TCP segments, in capture order; the other arrays
    of length ``len(rows)`` are aligned with it. Per-flow arrays have one entry per flow row.
    """

    rows: I64  # PacketTable rows of the TCP packets, in capture order
    flow: I32  # 0-based flow row per TCP packet (flow id - 1)
    direction: npt.NDArray[np.uint8]  # 0 client → server, 1 server → client
    client_row: I64  # per flow: a PacketTable row sent by the client (its SYN, else first packet)
    client_from_syn: B  # per flow: the client was identified by a SYN or SYN/ACK
    first_row: I64  # per flow: PacketTable row of the flow's first packet
    isn_client: U32  # per flow: Wireshark's base sequence number of each direction
    isn_server: U32

    @property
    def n_flows(self) -> int:
        return int(self.first_row.shape[0])


def tcp_rows(packets: PacketTable) -> I64:
    """Rows of the packet table that are decoded TCP segments."""
    bad = NOT_TCP | MALFORMED | UNSUPPORTED_LINK
    ok = ((packets.status & PARSED) != 0) & ((packets.status & bad) == 0)
    ok &= packets.ip_proto == 6
    rows: I64 = np.flatnonzero(ok).astype(np.int64)
    return rows


def assign_flows(packets: PacketTable) -> FlowAssignment:
    """Split the capture's TCP packets into flows (see module docstring)."""
    rows = tcp_rows(packets)
    flow, src_is_lo, first_idx, base, syn_idx, synack_idx = _assign(
        rows,
        packets.src_id,
        packets.dst_id,
        packets.src_port,
        packets.dst_port,
        packets.tcp_seq,
        packets.tcp_ack,
        packets.tcp_flags,
    )
    # Client: sender of the first pure SYN, else receiver of the first SYN/ACK, else the first
    # sender (DESIGN.md).
    client_idx = np.where(syn_idx >= 0, syn_idx, first_idx)
    client_is_lo = src_is_lo[client_idx]
    by_synack = (syn_idx < 0) & (synack_idx >= 0)
    client_is_lo[by_synack] = ~src_is_lo[synack_idx[by_synack]]
    direction = (src_is_lo != client_is_lo[flow]).view(np.uint8)
    isn_client = np.where(client_is_lo, base[:, 0], base[:, 1])
    isn_server = np.where(client_is_lo, base[:, 1], base[:, 0])
    return FlowAssignment(
        rows=rows,
        flow=flow,
        direction=direction,
        client_row=rows[client_idx],
        client_from_syn=(syn_idx >= 0) | by_synack,
        first_row=rows[first_idx],
        isn_client=isn_client,
        isn_server=isn_server,
    )


@kernel
def _mix(h: np.uint64, v: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    h ^= v + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
    return h


@kernel
def _hash(c0, c1, c2, c3, c4, c5):  # type: ignore[no-untyped-def]  # pragma: no cover
    h = np.uint64(0)
    h = _mix(h, c0)
    h = _mix(h, c1)
    h = _mix(h, c2 | (c5 << np.uint64(16)))
    h = _mix(h, c3)
    h = _mix(h, c4)
    return h


@kernel
def _grow(a, size):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    out = np.empty((size,) + a.shape[1:], a.dtype)  # noqa: RUF005 (numba: no starred tuples)
    out[: a.shape[0]] = a
    return out


@kernel
def _assign(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    rows, src, dst, src_port, dst_port, seq, ack, flags
):
    """One pass: conversation hash lookup + Wireshark's new-instance-on-new-ISN rule.

    Returns per TCP packet (flow, src_is_lo) and per flow (first packet index, base sequence
    number of the canonical lo→hi and hi→lo directions, first pure SYN and SYN/ACK index).
    Per-conversation and per-flow tables start small and double, so memory follows the number
    of connections, not of packets.
    """
    n = rows.shape[0]
    cap = 1024  # conversations and flows
    slots = np.full(2 * cap, -1, np.int64)  # open addressing, load factor <= 1/2
    mask = np.uint64(2 * cap - 1)
    keys = np.empty((cap, 6), np.uint64)
    conv_flow = np.empty(cap, np.int64)
    conv_base = np.zeros((cap, 2), np.uint32)
    conv_base_set = np.zeros((cap, 2), np.bool_)
    flow_cap = 1024
    first_idx = np.empty(flow_cap, np.int64)
    flow_base = np.zeros((flow_cap, 2), np.uint32)
    syn_idx = np.full(flow_cap, -1, np.int64)
    synack_idx = np.full(flow_cap, -1, np.int64)
    flow = np.empty(n, np.int32)
    src_is_lo = np.empty(n, np.bool_)
    n_conv = 0
    n_flow = 0
    last_key = np.full(6, np.iinfo(np.uint64).max, np.uint64)  # no port is 2**64 - 1
    last_conv = -1
    for i in range(n):
        r = rows[i]
        # the reader's address ids: equal ids are equal addresses (capture.addresses)
        a0, a1, a2 = np.uint64(src[r]), np.uint64(0), np.uint64(src_port[r])
        b0, b1, b2 = np.uint64(dst[r]), np.uint64(0), np.uint64(dst_port[r])
        lo_first = (a0, a1, a2) <= (b0, b1, b2)
        if lo_first:
            c0, c1, c2, c3, c4, c5 = a0, a1, a2, b0, b1, b2
        else:
            c0, c1, c2, c3, c4, c5 = b0, b1, b2, a0, a1, a2
        # consecutive packets mostly belong to one conversation: skip the hash lookup then
        if (
            c0 == last_key[0]
            and c2 == last_key[2]
            and c3 == last_key[3]
            and c5 == last_key[5]
            and c1 == last_key[1]
            and c4 == last_key[4]
        ):
            c = last_conv
        else:
            slot = _hash(c0, c1, c2, c3, c4, c5) & mask
            while True:
                c = slots[slot]
                if c < 0:
                    if n_conv == cap:  # grow the conversation table and rehash
                        cap *= 2
                        keys = _grow(keys, cap)
                        conv_flow = _grow(conv_flow, cap)
                        conv_base = _grow(conv_base, cap)
                        conv_base_set = _grow(conv_base_set, cap)
                        slots = np.full(2 * cap, -1, np.int64)
                        mask = np.uint64(2 * cap - 1)
                        for k in range(n_conv):
                            sl = (
                                _hash(
                                    keys[k, 0],
                                    keys[k, 1],
                                    keys[k, 2],
                                    keys[k, 3],
                                    keys[k, 4],
                                    keys[k, 5],
                                )
                                & mask
                            )
                            while slots[sl] >= 0:
                                sl = (sl + np.uint64(1)) & mask
                            slots[sl] = k
                        slot = _hash(c0, c1, c2, c3, c4, c5) & mask
                        while slots[slot] >= 0:
                            slot = (slot + np.uint64(1)) & mask
                    c = n_conv
                    n_conv += 1
                    slots[slot] = c
                    keys[c, 0], keys[c, 1], keys[c, 2] = c0, c1, c2
                    keys[c, 3], keys[c, 4], keys[c, 5] = c3, c4, c5
                    conv_flow[c] = -1
                    conv_base_set[c, 0] = False
                    conv_base_set[c, 1] = False
                    break
                if (
                    keys[c, 0] == c0
                    and keys[c, 1] == c1
                    and keys[c, 2] == c2
                    and keys[c, 3] == c3
                    and keys[c, 4] == c4
                    and keys[c, 5] == c5
                ):
                    break
                slot = (slot + np.uint64(1)) & mask
            last_key[0], last_key[1], last_key[2] = c0, c1, c2
            last_key[3], last_key[4], last_key[5] = c3, c4, c5
            last_conv = c
        d = 0 if lo_first else 1
        f = flags[r]
        is_syn = (f & 0x02) != 0
        pure_syn = is_syn and (f & 0x10) == 0
        new_instance = conv_flow[c] < 0
        if pure_syn and conv_base_set[c, d] and seq[r] != conv_base[c, d]:
            new_instance = True  # port pair reused with a new ISN (Wireshark: reused_ports)
        if new_instance:
            if n_flow == flow_cap:
                flow_cap *= 2
                first_idx = _grow(first_idx, flow_cap)
                flow_base = _grow(flow_base, flow_cap)
                syn_idx = _grow(syn_idx, flow_cap)
                synack_idx = _grow(synack_idx, flow_cap)
            conv_flow[c] = n_flow
            first_idx[n_flow] = i
            flow_base[n_flow, 0] = 0
            flow_base[n_flow, 1] = 0
            syn_idx[n_flow] = -1
            synack_idx[n_flow] = -1
            conv_base_set[c, 0] = False
            conv_base_set[c, 1] = False
            n_flow += 1
        fl = conv_flow[c]
        # Wireshark's base_seq: ISN from the SYN, else first seq - 1; the reverse ISN from the
        # first ACK seen if that direction has not sent yet (ack - 1).
        if not conv_base_set[c, d]:
            conv_base[c, d] = seq[r] if is_syn else seq[r] - np.uint32(1)
            conv_base_set[c, d] = True
            flow_base[fl, d] = conv_base[c, d]
        if not conv_base_set[c, 1 - d] and (f & 0x10) != 0:
            conv_base[c, 1 - d] = ack[r] - np.uint32(1)
            conv_base_set[c, 1 - d] = True
            flow_base[fl, 1 - d] = conv_base[c, 1 - d]
        if pure_syn and syn_idx[fl] < 0:
            syn_idx[fl] = i
        if is_syn and not pure_syn and synack_idx[fl] < 0:
            synack_idx[fl] = i
        flow[i] = fl
        src_is_lo[i] = lo_first
    return (
        flow,
        src_is_lo,
        first_idx[:n_flow].copy(),
        flow_base[:n_flow].copy(),
        syn_idx[:n_flow].copy(),
        synack_idx[:n_flow].copy(),
    )
