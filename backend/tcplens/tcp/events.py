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

# Karn bookkeeping bits of a queued segment (q_state)
AMBIGUOUS = 1  # part of its sequence range was sent more than once: no RTT sample from it
SACKED = 2  # a SACK block already timed it


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


@parallel_kernel
def flow_events(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    chunks,
    offsets,
    sack_offsets,
    rows,
    direction,
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
    out_sack_row,
    out_sack_left,
    out_sack_right,
    q_next,
    q_state,
    rtt_ack,
    rtt_sent,
    zw,
    idle,
):
    """The per-packet state machine, flow by flow, the flows of each chunk in parallel.

    ``rows``/``direction`` list each flow's packets in capture order (:mod:`tcplens.tcp.grouping`);
    ``offsets`` are the Segments offsets. Every per-packet output is written to the packet's
    Segments row (``seg`` holds the columns, see :func:`tcplens.tcp.segments.build_segments`).
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
    q_head = np.full((nf, 2), -1, np.int64)
    q_tail = np.full((nf, 2), -1, np.int64)
    sack_cursor = np.full((nf, 2), -1, np.int64)
    sack_next = np.empty((nf, 2), np.int64)  # next SACK block row of each direction
    block_from = np.zeros(nf, np.int64)  # where the flow's next SACK block is searched from
    # zero-window spans (RFC 9293 §3.8.6.1) per direction; SYN and RST windows do not count
    zw_open = np.full((nf, 2), -1, np.int64)  # row of the first zero advertisement, or -1
    last_row = np.full((nf, 2), -1, np.int64)
    # per flow
    syn_idx = np.full(nf, -1, np.int64)
    synack_idx = np.full(nf, -1, np.int64)
    hsack_idx = np.full(nf, -1, np.int64)
    ws = np.full((nf, 2), -1, np.int8)  # -1 unknown, -2 scaling off (Wireshark's values)
    mss = np.full((nf, 2), -1, np.int32)
    sack_perm = np.zeros((nf, 2), np.bool_)
    last_syn_time = np.full(nf, -1, np.int64)
    first_rtt = np.zeros(nf, np.int64)
    # per flow direction
    seq_raw = np.zeros((nf, 2), np.uint32)
    seq_rel = np.zeros((nf, 2), np.int64)
    has_seq = np.zeros((nf, 2), np.bool_)
    ack_raw = np.zeros((nf, 2), np.uint32)
    ack_rel = np.zeros((nf, 2), np.int64)
    has_ack = np.zeros((nf, 2), np.bool_)
    nextseq = np.zeros((nf, 2), np.int64)
    has_nextseq = np.zeros((nf, 2), np.bool_)
    nextseqtime = np.zeros((nf, 2), np.int64)
    lastack = np.zeros((nf, 2), np.int64)
    has_lastack = np.zeros((nf, 2), np.bool_)
    lastacktime = np.zeros((nf, 2), np.int64)
    maxack = np.zeros((nf, 2), np.int64)  # highest ACK sent by the direction
    has_maxack = np.zeros((nf, 2), np.bool_)
    win = np.zeros((nf, 2), np.int64)
    has_win = np.zeros((nf, 2), np.bool_)
    win_from_syn = np.zeros((nf, 2), np.bool_)
    dupacknum = np.zeros((nf, 2), np.int64)
    lastsegflags = np.zeros((nf, 2), np.uint32)
    maxseqtobeacked = np.zeros((nf, 2), np.int64)
    has_maxseqtba = np.zeros((nf, 2), np.bool_)
    valid_bif = np.ones((nf, 2), np.bool_)  # Wireshark 4.0: valid until a capture gap
    first_seq = np.zeros((nf, 2), np.int64)  # first sequence number the direction sent
    sacks = np.zeros((nf, 2), np.int64)
    sack_lo = np.zeros((nf, 2, 4), np.int64)
    sack_hi = np.zeros((nf, 2, 4), np.int64)
    # per-direction summaries for Flows: data range, re-sent data segments (tcp.resent)
    data_lo = np.zeros((nf, 2), np.int64)
    data_hi = np.zeros((nf, 2), np.int64)
    has_data = np.zeros((nf, 2), np.bool_)
    data_first_ns = np.full((nf, 2), -1, np.int64)  # earliest / latest data segment time
    data_last_ns = np.full((nf, 2), -1, np.int64)
    syn_ns = np.zeros((nf, 2), np.int64)  # the direction's first SYN without ACK, if has_syn
    has_syn = np.zeros((nf, 2), np.bool_)
    first_syn_ns = np.full(nf, -1, np.int64)  # the client's, else the server's; -1 without
    resent_n = np.zeros((nf, 2), np.int64)
    has_ts = np.zeros((nf, 2), np.bool_)
    flow_first_ns = np.zeros(nf, np.int64)
    flow_last_ns = np.zeros(nf, np.int64)
    fin_rst = np.zeros(nf, np.int64)  # bit 0: FIN seen, bit 1: RST seen
    n_rtt_of = np.zeros(nf, np.int64)
    n_zw_of = np.zeros(nf, np.int64)
    n_idle_of = np.zeros(nf, np.int64)
    for c in numba.prange(chunks.shape[0] - 1):
        blocks = np.empty((4, 2), np.int64)  # this packet's SACK blocks, relative to the ISN
        for f in range(chunks[c], chunks[c + 1]):
            first = offsets[2 * f]
            rtt_base = 2 * first
            zw_base = first
            n_rtt = 0
            n_zw = 0
            n_idle = 0
            next_row0 = first
            next_row1 = offsets[2 * f + 1]
            sack_next[f, 0] = sack_offsets[2 * f]
            sack_next[f, 1] = sack_offsets[2 * f + 1]
            prev_t = np.int64(0)
            prev_i = -1
            lo_t = np.int64(0)
            hi_t = np.int64(0)
            uf = np.uint64(f)
            for k in range(first, offsets[2 * f + 2]):
                r = rows[k]
                ur = np.uint64(r)  # unsigned indices: no negative-index wraparound per access
                fw = direction[k]
                rv = fw ^ np.uint8(1)
                if fw == 0:
                    i = next_row0
                    next_row0 += 1
                else:
                    i = next_row1
                    next_row1 += 1
                u = np.uint64(i)
                out_ack[u] = 0
                bif[u] = -1
                n_blocks = 0
                t = ts_ns[ur]
                fl = tcp_flags[ur]
                ln = np.int64(tcp_len[ur])
                w = np.int64(tcp_window[ur])
                out_frame[u] = r + 1
                out_time[u] = t
                out_flags[u] = fl
                out_len[u] = ln
                out_sack_count[u] = min(opt_sack_count[ur], 4)
                is_ack = (fl & 0x10) != 0
                is_syn = (fl & 0x02) != 0
                syn_fin_rst = (fl & 0x07) != 0
                syn_fin = (fl & 0x03) != 0

                # relative, unwrapped sequence and acknowledgment numbers
                raw = tcp_seq[ur]
                if has_seq[uf, fw]:
                    s = seq_rel[uf, fw] + np.int64(np.int32(raw - seq_raw[uf, fw]))
                else:
                    s = np.int64(np.int32(raw - isn[uf, fw]))
                    has_seq[uf, fw] = True
                seq_raw[uf, fw] = raw
                seq_rel[uf, fw] = s
                out_seq[u] = s
                a = np.int64(0)
                if is_ack:
                    raw = tcp_ack[ur]
                    if has_ack[uf, fw]:
                        a = ack_rel[uf, fw] + np.int64(np.int32(raw - ack_raw[uf, fw]))
                    else:
                        a = np.int64(np.int32(raw - isn[uf, rv]))
                        has_ack[uf, fw] = True
                    ack_raw[uf, fw] = raw
                    ack_rel[uf, fw] = a
                    out_ack[u] = a
                    n_blocks = min(opt_sack_count[ur], 4)
                    if n_blocks > 0:
                        b = sack_next[uf, fw]
                        sack_next[uf, fw] = b + n_blocks
                        e = _entry(block_row, r, block_from[f])
                        block_from[f] = e + n_blocks
                        for j in range(n_blocks):
                            # edges relative to this ACK: 32-bit differences (RFC 1982)
                            ej = np.uint64(e + j)
                            bj = np.uint64(b + j)
                            left = np.int32(block_left[ej] - raw)
                            right = np.int32(block_right[ej] - raw)
                            out_sack_row[bj] = i
                            out_sack_left[bj] = left
                            out_sack_right[bj] = right
                            blocks[j, 0] = a + np.int64(left)
                            blocks[j, 1] = a + np.int64(right)

                # handshake: Wireshark's window-scale rules, MSS, SACK-permitted, ts_first_rtt
                if is_syn:
                    h = _entry(hs_rows, r, 0)
                    found = h < hs_rows.shape[0] and hs_rows[h] == r
                    opt_wscale = hs_wscale[h] if found else -1
                    opt_mss = hs_mss[h] if found else -1
                    opt_sack_perm = hs_sack_perm[h] if found else False
                    opt = np.int8(min(opt_wscale, MAX_WINDOW_SHIFT))
                    if not is_ack:
                        if synack_idx[f] < 0:
                            syn_idx[f] = i
                        mss[uf, fw] = opt_mss
                        sack_perm[uf, fw] = opt_sack_perm
                        if opt_wscale < 0:
                            ws[f, 0] = -2
                            ws[f, 1] = -2
                        else:
                            ws[uf, fw] = opt
                        last_syn_time[f] = t
                    elif synack_idx[f] < 0:
                        synack_idx[f] = i
                        mss[uf, fw] = opt_mss
                        sack_perm[uf, fw] = opt_sack_perm
                        if opt_wscale < 0:
                            ws[f, 0] = -2
                            ws[f, 1] = -2
                        elif ws[uf, rv] == -2:
                            ws[uf, fw] = -2
                        else:
                            ws[uf, fw] = opt
                elif is_ack:
                    if first_rtt[f] == 0 and last_syn_time[f] >= 0:
                        first_rtt[f] = t - last_syn_time[f]
                    if fw == 0 and synack_idx[f] >= 0 and hsack_idx[f] < 0:
                        hsack_idx[f] = i
                own = ws[uf, fw]
                out_win[u] = w << own if (own > 0 and not is_syn) else w

                if is_ack:
                    valid_bif[uf, rv] = True

                ev = np.uint32(0)
                # ZERO WINDOW PROBE
                if (
                    ln == 1
                    and has_nextseq[uf, fw]
                    and s == nextseq[uf, fw]
                    and has_win[uf, rv]
                    and win[uf, rv] == 0
                ):
                    ev |= ZERO_WINDOW_PROBE
                else:
                    if w == 0 and not syn_fin_rst:
                        ev |= ZERO_WINDOW
                    if has_nextseq[uf, fw] and s > nextseq[uf, fw] and (fl & 0x04) == 0:
                        ev |= LOST_SEGMENT
                        valid_bif[uf, fw] = False
                    if (
                        (ln == 0 or ln == 1)
                        and has_nextseq[uf, fw]
                        and s == nextseq[uf, fw] - 1
                        and (fl & 0x07) == 0
                    ):
                        ev |= KEEP_ALIVE
                    same_point = (
                        ln == 0
                        and has_nextseq[uf, fw]
                        and s == nextseq[uf, fw]
                        and has_lastack[uf, fw]
                        and is_ack
                        and a == lastack[uf, fw]
                        and not syn_fin_rst
                    )
                    if same_point and w != 0 and (not has_win[uf, fw] or w != win[uf, fw]):
                        ev |= WINDOW_UPDATE
                    if ln > 0 and not syn_fin_rst and has_lastack[uf, rv] and has_win[uf, rv]:
                        # the peer's scale; its SYN windows are never scaled (RFC 7323 §2.2)
                        sc = ws[uf, rv]
                        if sc != -1:
                            if sc < 0 or win_from_syn[uf, rv]:
                                sc = 0
                            # the right edge (tcp.window.window_headroom is this on demand)
                            if lastack[uf, rv] + (win[uf, rv] << sc) == s + ln:
                                ev |= WINDOW_FULL
                    done = False
                    repeated = same_point and has_win[uf, fw] and w == win[uf, fw]
                    if repeated and w != 0 and lastsegflags[uf, rv] & KEEP_ALIVE:
                        ev |= KEEP_ALIVE_ACK
                        done = True
                    if (
                        not done
                        and repeated
                        and w == 0
                        and lastsegflags[uf, rv] & ZERO_WINDOW_PROBE
                    ):
                        ev |= ZERO_WINDOW_PROBE_ACK
                        done = True
                    if not done and repeated and w != 0:
                        if dupacknum[uf, fw] == -1:
                            dupacknum[uf, fw] = 1
                        else:
                            dupacknum[uf, fw] += 1
                        ev |= DUPLICATE_ACK
                # finished_fwd: the ACK moved, so duplicate-ACK counting restarts
                if not (has_lastack[uf, fw] and is_ack and a == lastack[uf, fw]):
                    dupacknum[uf, fw] = 0

                # ACKED LOST PACKET: the ACK covers data the other direction was never seen to send
                if is_ack and has_maxseqtba[uf, rv] and a > maxseqtobeacked[uf, rv]:
                    if maxseqtobeacked[uf, rv] > nextseq[uf, rv]:
                        maxseqtobeacked[uf, rv] = nextseq[uf, rv]
                        ev |= ACK_LOST_SEGMENT
                    else:
                        if dupacknum[uf, rv] == 0:
                            ev |= ACK_LOST_SEGMENT
                        dupacknum[uf, rv] = -1

                # RETRANSMISSION / FAST RETRANSMISSION / OUT-OF-ORDER / SPURIOUS
                if (ln > 0 or syn_fin) and not (ev & KEEP_ALIVE):
                    not_advanced = has_nextseq[uf, fw] and s < nextseq[uf, fw]
                    if ln > 1 and has_nextseq[uf, fw] and nextseq[uf, fw] - 1 == s:
                        not_advanced = False
                    ooo_thres = first_rtt[f] if first_rtt[f] > 0 else OUT_OF_ORDER_DEFAULT_NS
                    end_flag = 1 if syn_fin else 0
                    if (
                        not_advanced
                        and dupacknum[uf, rv] >= 2
                        and has_lastack[uf, rv]
                        and lastack[uf, rv] == s
                        and t - lastacktime[uf, rv] < FAST_RETRANSMISSION_WINDOW_NS
                    ):
                        ev |= FAST_RETRANSMISSION | RETRANSMISSION
                    elif (
                        not_advanced
                        and t - nextseqtime[uf, fw] < ooo_thres
                        and nextseq[uf, fw] != s + ln + end_flag
                    ):
                        ev |= OUT_OF_ORDER
                    elif ln > 0 and has_lastack[uf, rv] and s + ln <= lastack[uf, rv]:
                        ev |= SPURIOUS_RETRANSMISSION | RETRANSMISSION
                    elif not_advanced:
                        ev |= RETRANSMISSION

                # a zero-window probe does not advance the expected sequence number
                probe = (ev & ZERO_WINDOW_PROBE) != 0
                end = s + ln + (1 if syn_fin else 0)
                if end > s and not probe:
                    if not has_nextseq[uf, fw] or end > nextseq[uf, fw]:
                        # new data (maybe partly resent): queue it for Karn's rule
                        q = i
                        q_next[u] = -1
                        ambiguous = has_nextseq[uf, fw] and s < nextseq[uf, fw]
                        q_state[u] = AMBIGUOUS if ambiguous else 0
                        if q_tail[uf, fw] >= 0:
                            q_next[q_tail[uf, fw]] = q
                        else:
                            q_head[uf, fw] = q
                        q_tail[uf, fw] = q
                    else:
                        # sent again: every queued segment it overlaps is now ambiguous (Karn)
                        e = q_head[uf, fw]
                        while e >= 0 and out_seq[e] < end:
                            if _end_of(e, out_seq, out_len, out_flags) > s:
                                q_state[e] |= AMBIGUOUS
                            e = q_next[e]
                if (not has_nextseq[uf, fw] or end > nextseq[uf, fw]) and not probe:
                    if not has_nextseq[uf, fw]:
                        first_seq[uf, fw] = s
                    nextseq[uf, fw] = end
                    has_nextseq[uf, fw] = True
                    nextseqtime[uf, fw] = t
                if (not has_maxseqtba[uf, fw] or s == maxseqtobeacked[uf, fw]) and not probe:
                    maxseqtobeacked[uf, fw] = nextseq[uf, fw]
                    has_maxseqtba[uf, fw] = True

                if is_ack:
                    # RTT (RFC 6298 Karn): an ACK that advances times the newest segment it covers,
                    # unless a segment in the newly covered range was sent more than once
                    if not has_maxack[uf, fw] or a > maxack[uf, fw]:
                        newest = -1
                        clean = True
                        e = q_head[uf, rv]
                        while e >= 0 and _end_of(e, out_seq, out_len, out_flags) <= a:
                            newest = e
                            clean = clean and (q_state[e] & AMBIGUOUS) == 0
                            e = q_next[e]
                        q_head[uf, rv] = e
                        if e < 0:
                            q_tail[uf, rv] = -1
                        if newest >= 0 and clean and t >= out_time[newest]:
                            rtt_ack[rtt_base + n_rtt] = i
                            rtt_sent[rtt_base + n_rtt] = newest
                            n_rtt += 1
                    # SACK (RFC 2018 §4): the first block ends at the most recently received segment
                    if n_blocks > 0 and blocks[0, 1] > a:
                        right = blocks[0, 1]
                        e = sack_cursor[uf, rv]
                        if e < 0 or _end_of(e, out_seq, out_len, out_flags) > right:
                            e = q_head[uf, rv]
                        while e >= 0 and _end_of(e, out_seq, out_len, out_flags) < right:
                            e = q_next[e]
                        if e >= 0:
                            sack_cursor[uf, rv] = e
                            end_e = _end_of(e, out_seq, out_len, out_flags)
                            if end_e == right and q_state[e] == 0:
                                q_state[e] = SACKED
                                if t >= out_time[e]:
                                    rtt_ack[rtt_base + n_rtt] = i
                                    rtt_sent[rtt_base + n_rtt] = e
                                    n_rtt += 1

                if (fl & 0x06) == 0:
                    if w == 0 and zw_open[uf, fw] < 0:
                        zw_open[uf, fw] = i
                    elif w != 0 and zw_open[uf, fw] >= 0:
                        zw[zw_base + n_zw, 0] = zw_open[uf, fw]
                        zw[zw_base + n_zw, 1] = i
                        zw[zw_base + n_zw, 2] = 1
                        n_zw += 1
                        zw_open[uf, fw] = -1
                last_row[uf, fw] = i
                win[uf, fw] = w
                has_win[uf, fw] = True
                win_from_syn[uf, fw] = is_syn
                if is_ack:
                    lastack[uf, fw] = a
                    has_lastack[uf, fw] = True
                    if not has_maxack[uf, fw] or a > maxack[uf, fw]:
                        maxack[uf, fw] = a
                        has_maxack[uf, fw] = True
                    sacks[uf, fw] = n_blocks
                    for j in range(n_blocks):
                        sack_lo[uf, fw, j] = blocks[j, 0]
                        sack_hi[uf, fw, j] = blocks[j, 1]
                else:
                    has_lastack[uf, fw] = False
                lastacktime[uf, fw] = t
                lastsegflags[uf, fw] = ev

                # bytes in flight after this data segment: highest sequence sent minus the peer's
                # highest ACK, minus what the peer holds according to its last SACK blocks
                if ln > 0 and valid_bif[uf, fw]:
                    low = maxack[uf, rv] if has_maxack[uf, rv] else first_seq[uf, fw]
                    top = nextseq[uf, fw]
                    flight = top - low
                    for j in range(sacks[uf, rv]):
                        lo = max(sack_lo[uf, rv, j], low)
                        hi = min(sack_hi[uf, rv, j], top)
                        if hi > lo:
                            flight -= hi - lo
                    if syn_fin:
                        flight -= 1
                    if 0 < flight < 2**31:  # Wireshark also drops absurd values (> 2e9)
                        bif[u] = flight
                events[u] = ev

                # Flows summaries: data range and re-sent data (the rule of tcp.resent.resent)
                if ln > 0:
                    data_end = s + ln
                    if has_data[uf, fw]:
                        again = s < data_hi[uf, fw] or (ev & RETRANSMISSION) != 0
                        data_lo[uf, fw] = min(data_lo[uf, fw], s)
                        data_hi[uf, fw] = max(data_hi[uf, fw], data_end)
                        # (min and max: a capture's clock may step back)
                        data_first_ns[uf, fw] = min(data_first_ns[uf, fw], t)
                        data_last_ns[uf, fw] = max(data_last_ns[uf, fw], t)
                    else:
                        again = (ev & RETRANSMISSION) != 0
                        data_lo[uf, fw] = s
                        data_hi[uf, fw] = data_end
                        data_first_ns[uf, fw] = t
                        data_last_ns[uf, fw] = t
                        has_data[uf, fw] = True
                    again = again and (ev & (KEEP_ALIVE | ZERO_WINDOW_PROBE)) == 0
                    out_resent[u] = again
                    if again:
                        resent_n[uf, fw] += 1
                else:
                    out_resent[u] = False
                if (fl & 0x12) == 0x02 and not has_syn[uf, fw]:  # SYN without ACK
                    syn_ns[uf, fw] = t
                    has_syn[uf, fw] = True
                if fl & 0x01:
                    fin_rst[f] |= 1
                if fl & 0x04:
                    fin_rst[f] |= 2
                if opt_has_ts[ur]:
                    has_ts[uf, fw] = True
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
            for d in range(2):  # spans still closed when the capture ends
                if zw_open[f, d] >= 0:
                    zw[zw_base + n_zw, 0] = zw_open[f, d]
                    zw[zw_base + n_zw, 1] = last_row[f, d]
                    zw[zw_base + n_zw, 2] = 0
                    n_zw += 1
            flow_first_ns[f] = lo_t
            for d in range(2):
                if has_syn[f, 1 - d]:  # (the client's, read last, wins)
                    first_syn_ns[f] = syn_ns[f, 1 - d]
            flow_last_ns[f] = hi_t
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
