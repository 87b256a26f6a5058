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

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import (
    ACK,
    MALFORMED,
    NOT_TCP,
    PARSED,
    SYN,
    UNSUPPORTED_LINK,
    PacketTable,
)

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
    src = np.ascontiguousarray(packets.src_addr[rows]).view(np.uint64).reshape(-1, 2)
    dst = np.ascontiguousarray(packets.dst_addr[rows]).view(np.uint64).reshape(-1, 2)
    flags = packets.tcp_flags[rows]
    flow, src_is_lo, first_idx, base = _assign(
        src[:, 0].copy(),
        src[:, 1].copy(),
        packets.src_port[rows].astype(np.uint64),
        dst[:, 0].copy(),
        dst[:, 1].copy(),
        packets.dst_port[rows].astype(np.uint64),
        packets.tcp_seq[rows],
        packets.tcp_ack[rows],
        flags,
    )
    n_flows = first_idx.shape[0]
    # Client: sender of the first pure SYN, else receiver of the first SYN/ACK, else the first
    # sender (DESIGN.md). Found with one reverse scatter: the earliest index wins.
    pure_syn = (flags & (SYN | ACK)) == SYN
    syn_ack = (flags & (SYN | ACK)) == (SYN | ACK)
    syn_idx = _first_in_flow(flow, pure_syn, n_flows)
    synack_idx = _first_in_flow(flow, syn_ack, n_flows)
    client_idx = np.where(syn_idx >= 0, syn_idx, first_idx)
    client_is_lo = src_is_lo[client_idx]
    by_synack = (syn_idx < 0) & (synack_idx >= 0)
    client_is_lo[by_synack] = ~src_is_lo[synack_idx[by_synack]]
    direction = (src_is_lo != client_is_lo[flow]).astype(np.uint8)
    isn_client = np.where(client_is_lo, base[:, 0], base[:, 1]).astype(np.uint32)
    isn_server = np.where(client_is_lo, base[:, 1], base[:, 0]).astype(np.uint32)
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


def _first_in_flow(flow: I32, mask: B, n_flows: int) -> I64:
    """Per flow, the first index ``i`` with ``mask[i]`` (-1 if none); ``flow`` unsorted."""
    idx = np.flatnonzero(mask)
    out = np.full(n_flows, -1, dtype=np.int64)
    # assignment with repeated indices keeps the last write: write in reverse so the first wins
    out[flow[idx[::-1]]] = idx[::-1]
    return out


@numba.njit(cache=True)
def _mix(h: np.uint64, v: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    h ^= v + np.uint64(0x9E3779B97F4A7C15) + (h << np.uint64(6)) + (h >> np.uint64(2))
    return h


@numba.njit(cache=True)
def _assign(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    a_hi, a_lo, a_port, b_hi, b_lo, b_port, seq, ack, flags
):
    """One pass: conversation hash lookup + Wireshark's new-instance-on-new-ISN rule.

    Returns per packet (flow, src_is_lo) and per flow (first packet index, base sequence
    number of the canonical lo→hi and hi→lo directions).
    """
    n = a_hi.shape[0]
    cap = 1024
    while cap < 2 * n:
        cap *= 2
    mask = np.uint64(cap - 1)
    slots = np.full(cap, -1, np.int64)  # conversation id per slot
    k0 = np.empty(n, np.uint64)
    k1 = np.empty(n, np.uint64)
    k2 = np.empty(n, np.uint64)
    k3 = np.empty(n, np.uint64)
    k4 = np.empty(n, np.uint64)
    k5 = np.empty(n, np.uint64)
    conv_flow = np.empty(n, np.int64)
    conv_base = np.zeros((n, 2), np.uint32)
    conv_base_set = np.zeros((n, 2), np.bool_)
    flow = np.empty(n, np.int32)
    src_is_lo = np.empty(n, np.bool_)
    first_idx = np.empty(n, np.int64)
    flow_base = np.zeros((n, 2), np.uint32)
    n_conv = 0
    n_flow = 0
    for i in range(n):
        lo_first = (a_hi[i], a_lo[i], a_port[i]) <= (b_hi[i], b_lo[i], b_port[i])
        if lo_first:
            c0, c1, c2, c3, c4, c5 = a_hi[i], a_lo[i], a_port[i], b_hi[i], b_lo[i], b_port[i]
        else:
            c0, c1, c2, c3, c4, c5 = b_hi[i], b_lo[i], b_port[i], a_hi[i], a_lo[i], a_port[i]
        h = np.uint64(0)
        h = _mix(h, c0)
        h = _mix(h, c1)
        h = _mix(h, c2 | (c5 << np.uint64(16)))
        h = _mix(h, c3)
        h = _mix(h, c4)
        s = h & mask
        while True:
            c = slots[s]
            if c < 0:
                c = n_conv
                n_conv += 1
                slots[s] = c
                k0[c], k1[c], k2[c], k3[c], k4[c], k5[c] = c0, c1, c2, c3, c4, c5
                conv_flow[c] = -1
                break
            if (
                k0[c] == c0
                and k1[c] == c1
                and k2[c] == c2
                and k3[c] == c3
                and k4[c] == c4
                and k5[c] == c5
            ):
                break
            s = (s + np.uint64(1)) & mask
        d = 0 if lo_first else 1
        f = flags[i]
        is_syn = (f & 0x02) != 0
        pure_syn = is_syn and (f & 0x10) == 0
        new_instance = conv_flow[c] < 0
        if pure_syn and conv_base_set[c, d] and seq[i] != conv_base[c, d]:
            new_instance = True  # port pair reused with a new ISN (Wireshark: reused_ports)
        if new_instance:
            conv_flow[c] = n_flow
            first_idx[n_flow] = i
            conv_base_set[c, 0] = False
            conv_base_set[c, 1] = False
            n_flow += 1
        fl = conv_flow[c]
        # Wireshark's base_seq: ISN from the SYN, else first seq - 1; the reverse ISN from the
        # first ACK seen if that direction has not sent yet (ack - 1).
        if not conv_base_set[c, d]:
            conv_base[c, d] = seq[i] if is_syn else seq[i] - np.uint32(1)
            conv_base_set[c, d] = True
            flow_base[fl, d] = conv_base[c, d]
        if not conv_base_set[c, 1 - d] and (f & 0x10) != 0:
            conv_base[c, 1 - d] = ack[i] - np.uint32(1)
            conv_base_set[c, 1 - d] = True
            flow_base[fl, 1 - d] = conv_base[c, 1 - d]
        flow[i] = fl
        src_is_lo[i] = lo_first
    return flow, src_is_lo, first_idx[:n_flow].copy(), flow_base[:n_flow].copy()
