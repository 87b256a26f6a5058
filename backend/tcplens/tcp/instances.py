"""Step 2 of the flow assignment (:mod:`tcplens.tcp.flows`): Wireshark's conversation state
machine, serially, over the packets step 1 (:mod:`tcplens.tcp.conversations`) recorded only,
part after part (so in capture order): it maps local conversations to global ones, starts flows,
fixes the bases, and cuts each local conversation into pieces of one flow each — nearly always
one piece.
"""

from __future__ import annotations

import numpy as np

from tcplens.capture.table import ACK, SYN
from tcplens.tcp.compiled import kernel
from tcplens.tcp.conversations import find_slot, rehash


@kernel
def _grow(a, size):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    out = np.empty((size,) + a.shape[1:], a.dtype)  # noqa: RUF005 (numba: no starred tuples)
    out[: a.shape[0]] = a
    return out


@kernel
def flow_instances(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    bounds, seed, n_local, n_events, keys, counts, event_row, event_tag, event_before,
    seq, ack, flags, first_piece,
):  # fmt: skip
    """Wireshark's conversation state machine over the recorded packets (step 2).

    Returns the per-flow facts, the per-(flow, direction) offsets of the packets (client →
    server first), and the pieces: per piece its first row, the next
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
    total = np.empty((flow_cap, 2), np.int64)  # per lower/higher direction, as ``counts``
    n_flow = 0
    piece_cap = 64
    piece_flow = np.empty(piece_cap, np.int64)
    piece_row = np.empty(piece_cap, np.int64)
    piece_next = np.empty(piece_cap, np.int64)
    piece_start = np.empty((piece_cap, 2), np.int64)  # counts of its conversation before it
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
                s = find_slot(slots, conv_keys, 0, keys[j, 0], keys[j, 1], seed)
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
                        slots = rehash(conv_keys, 0, n_conv, seed)
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
    for q in range(n_piece):
        fl = piece_flow[q]
        for k in range(2):  # lower/higher endpoint direction k is the flow's direction k ^ flip
            piece_at[q, k] += offsets[2 * fl + (k ^ flip[fl])]
    return (
        (first_row, client_from_syn, isn_client, isn_server),
        offsets,
        (piece_row[:n_piece].copy(), piece_next[:n_piece].copy(), piece_at[:n_piece].copy()),
    )  # fmt: skip


@kernel
def _close(q, before, piece_flow, piece_start, piece_at, total):  # type: ignore[no-untyped-def]  # pragma: no cover
    """End piece ``q`` where its conversation had ``before`` packets: add them to its flow.
    The piece's packets of each direction come after the flow's earlier ones of that direction."""
    fl = piece_flow[q]
    piece_at[q, 0] = total[fl, 0]
    piece_at[q, 1] = total[fl, 1]
    for k in range(2):
        total[fl, k] += before[k] - piece_start[q, k]
