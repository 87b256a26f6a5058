"""Wireshark's TCP expert analysis (``tcp.analysis.*``) and bytes in flight.

Wireshark decides each flag from a small per-direction state (next expected sequence number,
last ACK, last window, duplicate-ACK count, ...) updated packet by packet in capture order
(``tcp_analyze_sequence_number`` in epan/dissectors/packet-tcp.c). The flags depend on that
state, so this is a genuinely sequential state machine: one compiled pass over the TCP packets
in capture order, with the state of every flow direction held in ``(n_flows, 2)`` arrays. The
same pass unwraps sequence numbers (a running sum of signed 32-bit steps per direction, RFC
1982), follows the handshake (window scale, MSS, SACK-permitted as Wireshark's
``verify_tcp_window_scaling`` decides them) and scales windows. The rules and their order
follow Wireshark 4.0 so that the flags agree with what users see in Wireshark:

* zero_window_probe: 1 byte at the next expected sequence number while the peer's window is 0.
* zero_window: window field 0 on a segment without SYN/FIN/RST.
* lost_segment: the segment starts beyond the next expected sequence number ("previous segment
  not captured").
* keep_alive: 0 or 1 byte starting one before the next expected sequence number.
* window_update: empty segment at the expected sequence number, same ACK, different window.
* window_full: the segment ends exactly at the peer's last advertised right edge
  (ack + scaled window), only when the peer's window scale is known.
* keep_alive_ack / zero_window_probe_ack: the repeated ACK answering one of those probes.
* duplicate_ack: empty segment repeating sequence number, ACK and window.
* ack_lost_segment: an ACK beyond anything the other direction was seen to send.
* spurious / fast retransmission, out_of_order, retransmission: a segment with data (or
  SYN/FIN) that does not advance the sequence number; fast if it follows >= 2 duplicate ACKs
  for its sequence number within 20 ms, out-of-order if it comes within the handshake RTT
  (3 ms without one) of the highest segment, spurious if the peer had already acknowledged it.
  Fast and spurious retransmissions also carry ``retransmission``, as in Wireshark's output.

Bytes in flight follow Wireshark 4.0 (highest sequence sent minus the peer's ACK, minus the
bytes in the peer's last SACK blocks, RFC 2018) with one deliberate difference: SACK blocks are
clipped to the unacknowledged range first. A D-SACK block (RFC 2883) reports a duplicate
*below* the cumulative ACK; Wireshark subtracts it anyway and understates what is in flight.
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from tcplens.tcp.compiled import inline_kernel, parallel_kernel
from tcplens.tcp.model import (
    ACK_LOST_SEGMENT,
    DUPLICATE_ACK,
    EVENT_NAMES,
    FAST_RETRANSMISSION,
    IDLE_GAP_MIN_NS,
    KEEP_ALIVE,
    KEEP_ALIVE_ACK,
    LOST_SEGMENT,
    OUT_OF_ORDER,
    RETRANSMISSION,
    SPURIOUS_RETRANSMISSION,
    WINDOW_FULL,
    WINDOW_UPDATE,
    ZERO_WINDOW,
    ZERO_WINDOW_PROBE,
    ZERO_WINDOW_PROBE_ACK,
)

I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U16 = npt.NDArray[np.uint16]
U32 = npt.NDArray[np.uint32]
B = npt.NDArray[np.bool_]

# Wireshark's thresholds (packet-tcp.c): a fast retransmission follows the last duplicate ACK
# within 20 ms; without a handshake RTT, "out of order" means within 3 ms of the highest segment.
FAST_RETRANSMISSION_WINDOW_NS = 20_000_000
OUT_OF_ORDER_DEFAULT_NS = 3_000_000
MAX_WINDOW_SHIFT = 14  # RFC 7323 §2.3: larger shifts are treated as 14

# Karn bookkeeping bits of a queued segment, kept in its ``events`` above the event kinds while
# its flow is walked (no array of their own: fresh memory is the main per-packet cost, issue 4)
# and cleared when the flow is done
AMBIGUOUS = 1 << 14  # part of its sequence range was sent more than once: no RTT sample from it
SACKED = 1 << 15  # a SACK block already timed it
EVENT_BITS = (1 << 14) - 1
assert len(EVENT_NAMES) <= 14  # the event kinds leave the two top bits of the uint16 free


@inline_kernel
def _entry(rows, r, lo):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """First index ``j >= lo`` of the ascending ``rows`` with ``rows[j] >= r``: galloping from
    ``lo`` (a flow's next SACK block is usually the next entry), then a binary search."""
    n = rows.shape[0]
    step = 1
    hi = lo
    while hi < n and rows[hi] < r:
        lo = hi + 1
        hi += step
        step *= 2
    return lo + np.searchsorted(rows[lo : min(hi, n)], r)


@inline_kernel
def _end_of(row, seq, length, flags):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Sequence number after a segment: payload plus one for SYN or FIN (RFC 9293)."""
    return seq[row] + length[row] + (1 if (flags[row] & 0x03) != 0 else 0)


# The state of the flow being walked, one row of _N_STATE int64 per direction (client → server
# first), in one small array per thread that stays in the L1 cache. One array with fixed field
# offsets, not one (n_flows, 2) array per variable: each access is then one load at a constant
# offset from the row instead of loading that array's data pointer and strides first, and the
# per-flow facts are written out once when the flow ends. Field names follow packet-tcp.c's
# tcp_flow_t where they come from it.
_ISN = 0  # the direction's ISN (Wireshark's base_seq) ...
_SEQ_REL = 1  # ... and its last sequence number relative to it, unwrapped
_PEER_ISN = 2  # the same for its acknowledgment numbers (relative to the peer's ISN)
_ACK_REL = 3
_NEXTSEQ = 4  # next expected sequence number (nextseq), if _HAS_NEXTSEQ
_HAS_NEXTSEQ = 5
_NEXTSEQTIME = 6
_LASTACK = 7  # ACK of the direction's last packet, if _HAS_LASTACK (it carried one)
_HAS_LASTACK = 8
_LASTACKTIME = 9
_MAXACK = 10  # highest ACK sent by the direction, if _HAS_MAXACK
_HAS_MAXACK = 11
_WIN = 12  # last advertised window (raw), -1 before the first packet
_WIN_FROM_SYN = 14  # ... and it came with a SYN (never scaled)
_DUPACKNUM = 15
_LASTSEGFLAGS = 16  # events of the direction's last packet
_MAXSEQTOBEACKED = 17  # if _HAS_MAXSEQTBA
_HAS_MAXSEQTBA = 18
_VALID_BIF = 19  # Wireshark 4.0: bytes in flight valid until a capture gap
_FIRST_SEQ = 20  # first sequence number the direction sent
_SACKS = 21  # number of SACK blocks of its last ACK, their edges relative to the peer's ISN:
_SACK_LO = 22  # 4 fields
_SACK_HI = 26  # 4 fields
_DATA_LO = 30  # data range, if _HAS_DATA (Flows.bytes_*)
_DATA_HI = 31
_HAS_DATA = 32
_DATA_FIRST_NS = 33  # earliest / latest time of a segment with payload, -1 without
_DATA_LAST_NS = 34
_SYN_NS = 35  # the direction's first SYN without ACK, if _HAS_SYN
_RESENT = 36  # data segments re-sending sequence space (tcp.resent)
_HAS_TS = 37  # sent the timestamps option
_Q_HEAD = 38  # Karn queue (Segments rows linked through q_next), -1 empty
_Q_TAIL = 39
_SACK_CURSOR = 40  # where the SACK sample search stopped last, -1 none
_SACK_NEXT = 41  # next SACK block row (Segments) of the direction
_ZW_OPEN = 42  # row of the first zero-window advertisement of an open span, or -1
_WS = 44  # window scale: -1 unknown, -2 scaling off (Wireshark's values), else the shift
_MSS = 45  # MSS option of its SYN, -1 without
_SACK_PERM = 46  # its SYN offered SACK
_HAS_SYN = 48
_NO_ROW = np.int64(1 << 62)  # beyond every row
_N_STATE = 64  # fields per direction (a power of two: a row is 512 bytes)


@inline_kernel
def _start_flow(st, isn, f, sack_offsets):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The state of both directions before flow ``f``'s first packet."""
    for d in range(2):
        o = d * _N_STATE
        st[o : o + _N_STATE] = 0
        # the first sequence number is relative to the ISN, the first ACK to the peer's
        st[o + _ISN] = np.int64(isn[f, d])
        st[o + _PEER_ISN] = np.int64(isn[f, 1 - d])
        st[o + _VALID_BIF] = 1
        st[o + _DATA_FIRST_NS] = -1
        st[o + _DATA_LAST_NS] = -1
        st[o + _Q_HEAD] = -1
        st[o + _Q_TAIL] = -1
        st[o + _SACK_CURSOR] = -1
        st[o + _SACK_NEXT] = sack_offsets[2 * f + d]
        st[o + _ZW_OPEN] = -1
        st[o + _WIN] = -1
        st[o + _WS] = -1
        st[o + _MSS] = -1


@parallel_kernel
def flow_events(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    chunks,
    offsets,
    sack_offsets,
    rows,
    isn,
    ts_ns,
    tcp_seq,
    tcp_ack,
    tcp_flags,
    tcp_window,
    tcp_len,
    hs_rows,
    hs_wscale,
    hs_mss,
    hs_sack_perm,
    opt_sack_count,
    block_row,
    block_left,
    block_right,
    opt_has_ts,
    seg,
    out_sack_left,
    out_sack_right,
    q_next,
    rtt_ack,
    rtt_sent,
    zw,
    idle,
):
    """The per-packet state machine, flow by flow, the flows of each chunk in parallel.

    ``rows`` holds each packet's PacketTable row at its Segments row (:mod:`tcplens.tcp.grouping`;
    ``offsets`` are the Segments offsets): each flow is walked in capture order by merging its
    two directions' ascending rows. Every per-packet output is written to the packet's Segments
    row (``seg`` holds the columns, see :func:`tcplens.tcp.segments.build_segments`); the frame
    column is ``rows`` itself (viewed as uint32), each row overwritten by its frame number once
    the merge has read it.
    Variable-length outputs go to per-flow regions that cannot overflow: data → ACK RTT samples
    (at most two per packet: one cumulative, one SACK) at ``2 * first row`` of the flow, zero-
    window spans and idle-gap candidates (at most one per packet) at its first row; their counts
    are in ``per_flow``. Nothing is shared between flows, so the result does not depend on how
    the chunks are scheduled.
    """
    (
        out_frame,
        out_time,
        out_flags,
        out_len,
        out_seq,
        out_ack,
        out_win,
        out_sack_count,
        events,
        out_resent,
        bif,
    ) = seg
    nf = isn.shape[0]
    last = max(rows.shape[0] - 1, 0)
    # per flow results
    syn_idx = np.empty(nf, np.int64)
    synack_idx = np.empty(nf, np.int64)
    hsack_idx = np.empty(nf, np.int64)
    ws = np.empty((nf, 2), np.int8)  # -1 unknown, -2 scaling off (Wireshark's values)
    mss = np.empty((nf, 2), np.int32)
    sack_perm = np.empty((nf, 2), np.bool_)
    data_lo = np.empty((nf, 2), np.int64)
    data_hi = np.empty((nf, 2), np.int64)
    data_first_ns = np.empty((nf, 2), np.int64)
    data_last_ns = np.empty((nf, 2), np.int64)
    first_syn_ns = np.empty(nf, np.int64)  # the client's, else the server's; -1 without
    resent_n = np.empty((nf, 2), np.int64)
    has_ts = np.empty((nf, 2), np.bool_)
    flow_first_ns = np.empty(nf, np.int64)
    flow_last_ns = np.empty(nf, np.int64)
    fin_rst = np.empty(nf, np.int64)  # bit 0: FIN seen, bit 1: RST seen
    n_rtt_of = np.empty(nf, np.int64)
    n_zw_of = np.empty(nf, np.int64)
    n_idle_of = np.empty(nf, np.int64)
    for c in numba.prange(chunks.shape[0] - 1):
        blocks = np.empty((4, 2), np.int64)  # this packet's SACK blocks, relative to the ISN
        st = np.empty(2 * _N_STATE, np.int64)  # the flow's state (see _N_STATE)
        for f in range(chunks[c], chunks[c + 1]):
            _start_flow(st, isn, f, sack_offsets)
            first = offsets[2 * f]
            rtt_base = 2 * first
            zw_base = first
            n_rtt = 0
            n_zw = 0
            n_idle = 0
            # per flow: handshake rows, Wireshark's ts_first_rtt, where the flow's next SACK
            # block is searched from, FIN/RST seen
            syn_i = np.int64(-1)
            synack_i = np.int64(-1)
            hsack_i = np.int64(-1)
            last_syn_time = np.int64(-1)
            first_rtt = np.int64(0)
            block_from = np.int64(0)
            fr = np.int64(0)
            prev_t = np.int64(0)
            prev_i = -1
            lo_t = np.int64(0)
            hi_t = np.int64(0)
            end0 = offsets[2 * f + 1]
            end1 = offsets[2 * f + 2]
            # each direction's next Segments row and its PacketTable row (beyond every row when
            # the direction is done), in registers: kept in the state array, each packet's choice
            # waited for the previous packet's store (-4 to -5 ns/packet in registers)
            i0 = first
            i1 = end0
            r0 = np.int64(rows[np.uint64(i0)]) if i0 < end0 else _NO_ROW
            r1 = np.int64(rows[np.uint64(i1)]) if i1 < end1 else _NO_ROW
            for _ in range(first, end1):
                # the next packet in capture order: the earlier of the two directions' next ones
                # (the directions alternate unpredictably: selects, the compiler's choice)
                later = r1 < r0
                fw = np.uint8(later)
                r = min(r0, r1)
                i = i1 if later else i0
                nxt_i = i + 1
                nxt_r = np.int64(rows[np.uint64(min(nxt_i, last))])
                if later:
                    i1 = nxt_i
                    r1 = nxt_r if nxt_i < end1 else _NO_ROW
                else:
                    i0 = nxt_i
                    r0 = nxt_r if nxt_i < end0 else _NO_ROW
                ur = np.uint64(r)  # unsigned indices: no negative-index wraparound per access
                rv = fw ^ np.uint8(1)
                o = np.int64(fw) * _N_STATE  # this direction's state row ...
                v = np.int64(rv) * _N_STATE  # ... and the peer's
                u = np.uint64(i)
                n_blocks = 0
                karn = 0  # Karn bits of this packet (if it is queued)
                t = ts_ns[ur]
                fl = tcp_flags[ur]
                ln = np.int64(tcp_len[ur])
                w = np.int64(tcp_window[ur])
                sack_count = min(opt_sack_count[ur], 4)
                out_frame[u] = r + 1
                out_time[u] = t
                out_flags[u] = fl
                out_len[u] = ln
                out_sack_count[u] = sack_count
                is_ack = (fl & 0x10) != 0
                is_syn = (fl & 0x02) != 0
                syn_fin_rst = (fl & 0x07) != 0
                syn_fin = (fl & 0x03) != 0

                # relative, unwrapped sequence and acknowledgment numbers: the step from the last
                # raw number, which is the ISN plus the last relative one (mod 2**32), is taken
                # as a signed 32-bit difference (RFC 1982); no raw number to store per packet
                raw = tcp_seq[ur]
                rel = st[o + _SEQ_REL]
                s = rel + np.int64(np.int32(np.int64(raw) - st[o + _ISN] - rel))
                st[o + _SEQ_REL] = s
                out_seq[u] = s
                a = np.int64(0)
                if is_ack:
                    raw = tcp_ack[ur]
                    rel = st[o + _ACK_REL]
                    a = rel + np.int64(np.int32(np.int64(raw) - st[o + _PEER_ISN] - rel))
                    st[o + _ACK_REL] = a
                    n_blocks = sack_count
                    if n_blocks > 0:
                        b = st[o + _SACK_NEXT]
                        st[o + _SACK_NEXT] = b + n_blocks
                        e = _entry(block_row, r, block_from)
                        block_from = e + n_blocks
                        for j in range(n_blocks):
                            # edges relative to this ACK: 32-bit differences (RFC 1982)
                            ej = np.uint64(e + j)
                            bj = np.uint64(b + j)
                            left = np.int32(block_left[ej] - raw)
                            right = np.int32(block_right[ej] - raw)
                            out_sack_left[bj] = left
                            out_sack_right[bj] = right
                            blocks[j, 0] = a + np.int64(left)
                            blocks[j, 1] = a + np.int64(right)
                out_ack[u] = a

                # handshake: Wireshark's window-scale rules, MSS, SACK-permitted, ts_first_rtt
                if is_syn:
                    h = _entry(hs_rows, r, 0)
                    found = h < hs_rows.shape[0] and hs_rows[h] == r
                    opt_wscale = hs_wscale[h] if found else -1
                    opt_mss = hs_mss[h] if found else -1
                    opt_sack_perm = hs_sack_perm[h] if found else False
                    opt = np.int64(min(opt_wscale, MAX_WINDOW_SHIFT))
                    if not is_ack:
                        if synack_i < 0:
                            syn_i = i
                        st[o + _MSS] = opt_mss
                        st[o + _SACK_PERM] = opt_sack_perm
                        if opt_wscale < 0:
                            st[_WS] = -2
                            st[_N_STATE + _WS] = -2
                        else:
                            st[o + _WS] = opt
                        last_syn_time = t
                    elif synack_i < 0:
                        synack_i = i
                        st[o + _MSS] = opt_mss
                        st[o + _SACK_PERM] = opt_sack_perm
                        if opt_wscale < 0:
                            st[_WS] = -2
                            st[_N_STATE + _WS] = -2
                        elif st[v + _WS] == -2:
                            st[o + _WS] = -2
                        else:
                            st[o + _WS] = opt
                elif is_ack:
                    if first_rtt == 0 and last_syn_time >= 0:
                        first_rtt = t - last_syn_time
                    if fw == 0 and synack_i >= 0 and hsack_i < 0:
                        hsack_i = i
                own = st[o + _WS]
                out_win[u] = w << own if (own > 0 and not is_syn) else w

                if is_ack:
                    st[v + _VALID_BIF] = 1

                # the state this packet's rules read, loaded once (the output stores above and
                # below could alias any array, so the compiler would reload them at every use)
                has_nxt = st[o + _HAS_NEXTSEQ] != 0
                nxt = st[o + _NEXTSEQ]
                has_lack = st[o + _HAS_LASTACK] != 0
                lack = st[o + _LASTACK]
                win = st[o + _WIN]
                has_win = win >= 0
                has_lack_v = st[v + _HAS_LASTACK] != 0
                lack_v = st[v + _LASTACK]
                win_v = st[v + _WIN]
                has_win_v = win_v >= 0

                ev = np.uint32(0)
                # ZERO WINDOW PROBE
                if ln == 1 and has_nxt and s == nxt and has_win_v and win_v == 0:
                    ev |= ZERO_WINDOW_PROBE
                else:
                    if w == 0 and not syn_fin_rst:
                        ev |= ZERO_WINDOW
                    if has_nxt and s > nxt and (fl & 0x04) == 0:
                        ev |= LOST_SEGMENT
                        st[o + _VALID_BIF] = 0
                    if (ln == 0 or ln == 1) and has_nxt and s == nxt - 1 and (fl & 0x07) == 0:
                        ev |= KEEP_ALIVE
                    same_point = (
                        ln == 0
                        and has_nxt
                        and s == nxt
                        and has_lack
                        and is_ack
                        and a == lack
                        and not syn_fin_rst
                    )
                    if same_point and w != 0 and (not has_win or w != win):
                        ev |= WINDOW_UPDATE
                    if ln > 0 and not syn_fin_rst and has_lack_v and has_win_v:
                        # the peer's scale; its SYN windows are never scaled (RFC 7323 §2.2)
                        sc = st[v + _WS]
                        if sc != -1:
                            if sc < 0 or st[v + _WIN_FROM_SYN] != 0:
                                sc = 0
                            # the right edge (tcp.window.window_headroom is this on demand)
                            if lack_v + (win_v << sc) == s + ln:
                                ev |= WINDOW_FULL
                    done = False
                    repeated = same_point and has_win and w == win
                    if repeated and w != 0 and st[v + _LASTSEGFLAGS] & KEEP_ALIVE:
                        ev |= KEEP_ALIVE_ACK
                        done = True
                    if (
                        not done
                        and repeated
                        and w == 0
                        and st[v + _LASTSEGFLAGS] & ZERO_WINDOW_PROBE
                    ):
                        ev |= ZERO_WINDOW_PROBE_ACK
                        done = True
                    if not done and repeated and w != 0:
                        if st[o + _DUPACKNUM] == -1:
                            st[o + _DUPACKNUM] = 1
                        else:
                            st[o + _DUPACKNUM] += 1
                        ev |= DUPLICATE_ACK
                # finished_fwd: the ACK moved, so duplicate-ACK counting restarts
                if not (has_lack and is_ack and a == lack):
                    st[o + _DUPACKNUM] = 0

                # ACKED LOST PACKET: the ACK covers data the other direction was never seen to send
                if is_ack and st[v + _HAS_MAXSEQTBA] != 0 and a > st[v + _MAXSEQTOBEACKED]:
                    if st[v + _MAXSEQTOBEACKED] > st[v + _NEXTSEQ]:
                        st[v + _MAXSEQTOBEACKED] = st[v + _NEXTSEQ]
                        ev |= ACK_LOST_SEGMENT
                    else:
                        if st[v + _DUPACKNUM] == 0:
                            ev |= ACK_LOST_SEGMENT
                        st[v + _DUPACKNUM] = -1

                # RETRANSMISSION / FAST RETRANSMISSION / OUT-OF-ORDER / SPURIOUS
                if (ln > 0 or syn_fin) and not (ev & KEEP_ALIVE):
                    not_advanced = has_nxt and s < nxt
                    if ln > 1 and has_nxt and nxt - 1 == s:
                        not_advanced = False
                    ooo_thres = first_rtt if first_rtt > 0 else OUT_OF_ORDER_DEFAULT_NS
                    end_flag = 1 if syn_fin else 0
                    if (
                        not_advanced
                        and st[v + _DUPACKNUM] >= 2
                        and has_lack_v
                        and lack_v == s
                        and t - st[v + _LASTACKTIME] < FAST_RETRANSMISSION_WINDOW_NS
                    ):
                        ev |= FAST_RETRANSMISSION | RETRANSMISSION
                    elif (
                        not_advanced
                        and t - st[o + _NEXTSEQTIME] < ooo_thres
                        and nxt != s + ln + end_flag
                    ):
                        ev |= OUT_OF_ORDER
                    elif ln > 0 and has_lack_v and s + ln <= lack_v:
                        ev |= SPURIOUS_RETRANSMISSION | RETRANSMISSION
                    elif not_advanced:
                        ev |= RETRANSMISSION

                # a zero-window probe does not advance the expected sequence number
                probe = (ev & ZERO_WINDOW_PROBE) != 0
                end = s + ln + (1 if syn_fin else 0)
                advances = not has_nxt or end > nxt
                if end > s and not probe:
                    if advances:
                        # new data (maybe partly resent): queue it for Karn's rule
                        q_next[u] = -1
                        karn = AMBIGUOUS if (has_nxt and s < nxt) else 0
                        tail = st[o + _Q_TAIL]
                        if tail >= 0:
                            q_next[tail] = i
                        else:
                            st[o + _Q_HEAD] = i
                        st[o + _Q_TAIL] = i
                    else:
                        # sent again: every queued segment it overlaps is now ambiguous (Karn)
                        e = st[o + _Q_HEAD]
                        while e >= 0 and out_seq[e] < end:
                            if _end_of(e, out_seq, out_len, out_flags) > s:
                                events[e] |= AMBIGUOUS
                            e = q_next[e]
                if advances and not probe:
                    if not has_nxt:
                        st[o + _FIRST_SEQ] = s
                    nxt = end
                    has_nxt = True
                    st[o + _NEXTSEQ] = end
                    st[o + _HAS_NEXTSEQ] = 1
                    st[o + _NEXTSEQTIME] = t
                if (st[o + _HAS_MAXSEQTBA] == 0 or s == st[o + _MAXSEQTOBEACKED]) and not probe:
                    st[o + _MAXSEQTOBEACKED] = nxt
                    st[o + _HAS_MAXSEQTBA] = 1

                has_maxack = st[o + _HAS_MAXACK] != 0
                if is_ack:
                    # RTT (RFC 6298 Karn): an ACK that advances times the newest segment it covers,
                    # unless a segment in the newly covered range was sent more than once
                    if not has_maxack or a > st[o + _MAXACK]:
                        newest = -1
                        clean = True
                        e = st[v + _Q_HEAD]
                        while e >= 0 and _end_of(e, out_seq, out_len, out_flags) <= a:
                            newest = e
                            clean = clean and (events[e] & AMBIGUOUS) == 0
                            e = q_next[e]
                        st[v + _Q_HEAD] = e
                        if e < 0:
                            st[v + _Q_TAIL] = -1
                        if newest >= 0 and clean and t >= out_time[newest]:
                            rtt_ack[rtt_base + n_rtt] = i
                            rtt_sent[rtt_base + n_rtt] = newest
                            n_rtt += 1
                    # SACK (RFC 2018 §4): the first block ends at the most recently received segment
                    if n_blocks > 0 and blocks[0, 1] > a:
                        right = blocks[0, 1]
                        e = st[v + _SACK_CURSOR]
                        if e < 0 or _end_of(e, out_seq, out_len, out_flags) > right:
                            e = st[v + _Q_HEAD]
                        while e >= 0 and _end_of(e, out_seq, out_len, out_flags) < right:
                            e = q_next[e]
                        if e >= 0:
                            st[v + _SACK_CURSOR] = e
                            end_e = _end_of(e, out_seq, out_len, out_flags)
                            if end_e == right and (events[e] & (AMBIGUOUS | SACKED)) == 0:
                                events[e] |= SACKED
                                if t >= out_time[e]:
                                    rtt_ack[rtt_base + n_rtt] = i
                                    rtt_sent[rtt_base + n_rtt] = e
                                    n_rtt += 1

                if (fl & 0x06) == 0:
                    zw_open = st[o + _ZW_OPEN]
                    if w == 0 and zw_open < 0:
                        st[o + _ZW_OPEN] = i
                    elif w != 0 and zw_open >= 0:
                        zw[zw_base + n_zw, 0] = zw_open
                        zw[zw_base + n_zw, 1] = i
                        zw[zw_base + n_zw, 2] = 1
                        n_zw += 1
                        st[o + _ZW_OPEN] = -1
                st[o + _WIN] = w
                st[o + _WIN_FROM_SYN] = is_syn
                if is_ack:
                    st[o + _LASTACK] = a
                    st[o + _HAS_LASTACK] = 1
                    if not has_maxack or a > st[o + _MAXACK]:
                        st[o + _MAXACK] = a
                        st[o + _HAS_MAXACK] = 1
                    st[o + _SACKS] = n_blocks
                    for j in range(n_blocks):
                        st[o + _SACK_LO + j] = blocks[j, 0]
                        st[o + _SACK_HI + j] = blocks[j, 1]
                else:
                    st[o + _HAS_LASTACK] = 0
                st[o + _LASTACKTIME] = t
                st[o + _LASTSEGFLAGS] = ev

                # bytes in flight after this data segment: highest sequence sent minus the peer's
                # highest ACK, minus what the peer holds according to its last SACK blocks
                flight_out = -1
                if ln > 0 and st[o + _VALID_BIF] != 0:
                    low = st[v + _MAXACK] if st[v + _HAS_MAXACK] != 0 else st[o + _FIRST_SEQ]
                    top = nxt
                    flight = top - low
                    for j in range(st[v + _SACKS]):
                        lo = max(st[v + _SACK_LO + j], low)
                        hi = min(st[v + _SACK_HI + j], top)
                        if hi > lo:
                            flight -= hi - lo
                    if syn_fin:
                        flight -= 1
                    if 0 < flight < 2**31:  # Wireshark also drops absurd values (> 2e9)
                        flight_out = flight
                bif[u] = flight_out
                events[u] = ev | karn

                # Flows summaries: data range and re-sent data (the rule of tcp.resent.resent)
                if ln > 0:
                    data_end = s + ln
                    if st[o + _HAS_DATA] != 0:
                        again = s < st[o + _DATA_HI] or (ev & RETRANSMISSION) != 0
                        st[o + _DATA_LO] = min(st[o + _DATA_LO], s)
                        st[o + _DATA_HI] = max(st[o + _DATA_HI], data_end)
                        # (min and max: a capture's clock may step back)
                        st[o + _DATA_FIRST_NS] = min(st[o + _DATA_FIRST_NS], t)
                        st[o + _DATA_LAST_NS] = max(st[o + _DATA_LAST_NS], t)
                    else:
                        again = (ev & RETRANSMISSION) != 0
                        st[o + _DATA_LO] = s
                        st[o + _DATA_HI] = data_end
                        st[o + _DATA_FIRST_NS] = t
                        st[o + _DATA_LAST_NS] = t
                        st[o + _HAS_DATA] = 1
                    again = again and (ev & (KEEP_ALIVE | ZERO_WINDOW_PROBE)) == 0
                    out_resent[u] = again
                    if again:
                        st[o + _RESENT] += 1
                else:
                    out_resent[u] = False
                if (fl & 0x12) == 0x02 and st[o + _HAS_SYN] == 0:  # SYN without ACK
                    st[o + _SYN_NS] = t
                    st[o + _HAS_SYN] = 1
                fr |= np.int64(fl & 0x01) | (np.int64(fl & 0x04) >> 1)  # FIN: bit 0, RST: bit 1
                if opt_has_ts[ur]:
                    st[o + _HAS_TS] = 1
                if prev_i < 0:
                    lo_t = t
                    hi_t = t
                else:
                    lo_t = min(lo_t, t)
                    hi_t = max(hi_t, t)
                    if t - prev_t > IDLE_GAP_MIN_NS:  # a candidate; the RTT test comes later
                        idle[first + n_idle, 0] = prev_i
                        idle[first + n_idle, 1] = i
                        n_idle += 1
                prev_t = t
                prev_i = i
            for j in range(first, end1):  # the Karn bits are done with
                events[j] &= EVENT_BITS
            for d in range(2):  # spans still closed when the capture ends
                o = np.int64(d) * _N_STATE
                if st[o + _ZW_OPEN] >= 0:
                    zw[zw_base + n_zw, 0] = st[o + _ZW_OPEN]
                    zw[zw_base + n_zw, 1] = offsets[2 * f + d + 1] - 1  # the side's last row
                    zw[zw_base + n_zw, 2] = 0
                    n_zw += 1
            flow_first_ns[f] = lo_t
            flow_last_ns[f] = hi_t
            # the first SYN without ACK: the client's, else the server's
            first_syn_ns[f] = -1
            for d in range(2):
                if st[(1 - d) * _N_STATE + _HAS_SYN] != 0:  # (the client's, read last, wins)
                    first_syn_ns[f] = st[(1 - d) * _N_STATE + _SYN_NS]
            syn_idx[f] = syn_i
            synack_idx[f] = synack_i
            hsack_idx[f] = hsack_i
            fin_rst[f] = fr
            for d in range(2):
                o = np.int64(d) * _N_STATE
                ws[f, d] = st[o + _WS]
                mss[f, d] = st[o + _MSS]
                sack_perm[f, d] = st[o + _SACK_PERM] != 0
                data_lo[f, d] = st[o + _DATA_LO]
                data_hi[f, d] = st[o + _DATA_HI]
                data_first_ns[f, d] = st[o + _DATA_FIRST_NS]
                data_last_ns[f, d] = st[o + _DATA_LAST_NS]
                resent_n[f, d] = st[o + _RESENT]
                has_ts[f, d] = st[o + _HAS_TS] != 0
            n_rtt_of[f] = n_rtt
            n_zw_of[f] = n_zw
            n_idle_of[f] = n_idle
    return (
        syn_idx,
        synack_idx,
        hsack_idx,
        ws,
        mss,
        sack_perm,
        data_lo,
        data_hi,
        resent_n,
        has_ts,
        data_first_ns,
        data_last_ns,
        first_syn_ns,
        flow_first_ns,
        flow_last_ns,
        fin_rst,
        n_rtt_of,
        n_zw_of,
        n_idle_of,
    )
