"""The state :func:`tcplens.tcp.events.flow_events` keeps while it walks one flow.

One row of ``N_STATE`` int64 per direction (client → server first), in one small array per
thread that stays in the L1 cache. One array with fixed field offsets, not one (n_flows, 2)
array per variable: each access is then one load at a constant offset from the row instead of
loading that array's data pointer and strides first, and the per-flow facts are written out
once when the flow ends. Field names follow packet-tcp.c's tcp_flow_t where they come from it.
"""

from __future__ import annotations

import numpy as np

from tcplens.tcp.compiled import inline_kernel

ISN = 0  # the direction's ISN (Wireshark's base_seq) ...
SEQ_REL = 1  # ... and its last sequence number relative to it, unwrapped
PEER_ISN = 2  # the same for its acknowledgment numbers (relative to the peer's ISN)
ACK_REL = 3
NEXTSEQ = 4  # next expected sequence number (nextseq), NOT_SEEN before one
NEXTSEQTIME = 6
LASTACK = 7  # ACK of the direction's last packet, NOT_SEEN if it carried none
LASTACKTIME = 9
MAXACK = 10  # highest ACK sent by the direction, NOT_SEEN before one
WIN = 12  # last advertised window (raw), -1 before the first packet
WIN_FROM_SYN = 14  # ... and it came with a SYN (never scaled)
DUPACKNUM = 15
LASTSEGFLAGS = 16  # events of the direction's last packet
MAXSEQTOBEACKED = 17  # NOT_SEEN before one
VALID_BIF = 19  # Wireshark 4.0: bytes in flight valid until a capture gap
FIRST_SEQ = 20  # first sequence number the direction sent
SACKS = 21  # number of SACK blocks of its last ACK, their edges relative to the peer's ISN:
SACK_LO = 22  # 4 fields
SACK_HI = 26  # 4 fields
DATA_LO = 30  # data range, if HAS_DATA (Flows.bytes_*)
DATA_HI = 31
HAS_DATA = 32
DATA_FIRST_NS = 33  # earliest / latest time of a segment with payload, -1 without
DATA_LAST_NS = 34
SYN_NS = 35  # the direction's first SYN without ACK, if HAS_SYN
RESENT = 36  # data segments re-sending sequence space (tcp.resent)
HAS_TS = 37  # sent the timestamps option
Q_HEAD = 38  # Karn queue (tcp.karn): the direction's first entry not yet acknowledged ...
Q_END = 39  # ... and the one after its last entry
SACK_CURSOR = 40  # the entry where the SACK sample search stopped last, -1 none ...
SACK_LIMIT = 41  # ... and the end of its chain of entries, NO_ROW while that is open
ZW_OPEN = 42  # row of the first zero-window advertisement of an open span, or -1
WS = 44  # window scale: -1 unknown, -2 scaling off (Wireshark's values), else the shift
MSS = 45  # MSS option of its SYN, -1 without
SACK_PERM = 46  # its SYN offered SACK
HAS_SYN = 48
# the flow's own fields, in spare fields of the first row (tcp.handshake): its handshake rows
# (Segments rows, -1 none: Handshake.syn / synack / ack), its last SYN's time (-1 none),
# Wireshark's ts_first_rtt (0 none) and whether the last two rows are final
SYN_I = 5
SYNACK_I = 8
HSACK_I = 11
LAST_SYN_TIME = 13
FIRST_RTT = 18
HS_DONE = 43
NO_ROW = np.int64(1 << 62)  # beyond every row
# HSACK_I when a FIN or RST ended the connection instance before the client's ACK of the
# SYN/ACK: no handshake ACK is looked for any more
NO_HANDSHAKE_ACK = -2
# a relative sequence or ACK number field not set yet: below every real one (they are within
# +-2**62 of 0), so "not set, or below x" is one comparison and no separate "has" field is
# loaded and stored per packet
NOT_SEEN = np.int64(-(1 << 62))
N_STATE = 64  # fields per direction (a power of two: a row is 512 bytes)


@inline_kernel
def start_flow(st, isn, f, offsets):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The state of both directions before flow ``f``'s first packet."""
    for d in range(2):
        o = d * N_STATE
        st[o : o + N_STATE] = 0
        # the first sequence number is relative to the ISN, the first ACK to the peer's
        st[o + ISN] = np.int64(isn[f, d])
        st[o + PEER_ISN] = np.int64(isn[f, 1 - d])
        st[o + NEXTSEQ] = NOT_SEEN
        st[o + LASTACK] = NOT_SEEN
        st[o + MAXACK] = NOT_SEEN
        st[o + MAXSEQTOBEACKED] = NOT_SEEN
        st[o + VALID_BIF] = 1
        st[o + DATA_FIRST_NS] = -1
        st[o + DATA_LAST_NS] = -1
        # the direction's Karn queue: in the region of the buffer its Segments rows take
        st[o + Q_HEAD] = offsets[2 * f + d] - offsets[2 * f]
        st[o + Q_END] = st[o + Q_HEAD]
        st[o + SACK_CURSOR] = -1
        st[o + SACK_LIMIT] = NO_ROW
        st[o + ZW_OPEN] = -1
        st[o + WIN] = -1
        st[o + WS] = -1
        st[o + MSS] = -1
    st[SYN_I] = -1
    st[SYNACK_I] = -1
    st[HSACK_I] = -1
    st[LAST_SYN_TIME] = -1


@inline_kernel
def first_at_or_after(rows, r, lo):  # type: ignore[no-untyped-def]  # pragma: no cover
    """First index ``j >= lo`` of the ascending ``rows`` with ``rows[j] >= r``: galloping from
    ``lo`` (a flow's next SACK block is usually the next entry), then a binary search. How the
    walk finds a packet's entries in the PacketTable's per-option columns (SACK blocks,
    handshake options)."""
    n = rows.shape[0]
    if lo < n and rows[np.uint64(lo)] >= r:  # the usual case: at ``lo`` already
        return lo
    step = 1
    hi = lo
    while hi < n and rows[np.uint64(hi)] < r:
        lo = hi + 1
        hi += step
        step *= 2
    return lo + np.searchsorted(rows[lo : min(hi, n)], r)
