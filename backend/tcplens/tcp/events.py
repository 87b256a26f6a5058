"""The per-packet pass of the TCP analysis: every flow walked in capture order, flows in parallel.

Wireshark decides its ``tcp.analysis`` flags from a small per-direction state updated packet by
packet in capture order (``tcp_analyze_sequence_number`` in epan/dissectors/packet-tcp.c), so
this is a genuinely sequential state machine: one compiled pass over each flow's packets in
capture order, the flow's state in one small per-thread array (:mod:`tcplens.tcp.walk_state`).
The same pass unwraps sequence numbers (a running sum of signed 32-bit steps per direction, RFC
1982), follows the handshake (:mod:`tcplens.tcp.handshake`), scales windows, decides the
expert flags and bytes in flight (:mod:`tcplens.tcp.expert`), times segments by their ACKs
under Karn's rule (:mod:`tcplens.tcp.karn`) and sums up each flow.
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.compiled import WORKERS, in_turn
from tcplens.capture.table import LONG_LENGTH, OPTION_SACK_BLOCKS, OPTION_TIMESTAMPS
from tcplens.tcp.compiled import parallel_kernel
from tcplens.tcp.expert import advance_sequence, bytes_in_flight, expert_events
from tcplens.tcp.handshake import follow_handshake
from tcplens.tcp.karn import ENTRY, queue_sent, time_ack
from tcplens.tcp.model import (
    IDLE_GAP_MIN_NS,
    KEEP_ALIVE,
    RESENT_FLAG,
    RETRANSMISSION,
    SACK_COUNT_SHIFT,
    ZERO_WINDOW_PROBE,
)
from tcplens.tcp.walk_state import (
    ACK_REL,
    DATA_FIRST_NS,
    DATA_HI,
    DATA_LAST_NS,
    DATA_LO,
    HAS_DATA,
    HAS_SYN,
    HAS_TS,
    HSACK_I,
    ISN,
    LASTACK,
    LASTACKTIME,
    LASTSEGFLAGS,
    MAXACK,
    MSS,
    N_STATE,
    NO_HANDSHAKE_ACK,
    NO_ROW,
    NOT_SEEN,
    PEER_ISN,
    Q_END,
    Q_HEAD,
    RESENT,
    SACK_CURSOR,
    SACK_HI,
    SACK_LO,
    SACK_PERM,
    SACKS,
    SEQ_REL,
    SYN_I,
    SYN_NS,
    SYNACK_I,
    VALID_BIF,
    WIN,
    WIN_FROM_SYN,
    WS,
    ZW_OPEN,
    first_at_or_after,
    start_flow,
)

I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U16 = npt.NDArray[np.uint16]
U32 = npt.NDArray[np.uint32]
B = npt.NDArray[np.bool_]


@parallel_kernel
def flow_events(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    chunks,
    offsets,
    rows,
    isn,
    ts_ns,
    tcp_seq,
    tcp_ack,
    tcp_flags,
    tcp_window,
    tcp_len,
    long_rows,
    long_len,
    hs_rows,
    hs_wscale,
    hs_mss,
    hs_sack_perm,
    block_row,
    block_left,
    block_right,
    opt_options,
    seg,
    rtt_ack,
    rtt_sent,
    zw,
    idle,
):
    """The per-packet state machine, flow by flow, the flows of each chunk in parallel.

    ``rows`` holds each packet's PacketTable row at its Segments row (:mod:`tcplens.tcp.grouping`;
    ``offsets`` are the Segments offsets): each flow is walked in capture order by merging its
    two directions' ascending rows. A payload length is ``tcp_len``'s 16 bits, or, where that
    holds ``LONG_LENGTH`` (a TSO/GRO frame), its ``long_len`` entry (``long_rows``: the rows that
    have one, ascending). Every per-packet output is written to the packet's Segments
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
        events,
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
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # on all cores (capture.compiled.WORKERS)
        for c in in_turn(taken, chunks.shape[0] - 1):
            st = np.empty(2 * N_STATE, np.int64)  # the flow's state (see N_STATE)
            # the Karn queues of the flow being walked (tcp.karn)
            longest = 0
            for f in range(chunks[c], chunks[c + 1]):
                longest = max(longest, offsets[2 * f + 2] - offsets[2 * f])
            queue = np.empty((longest, ENTRY), np.int64)
            for f in range(chunks[c], chunks[c + 1]):
                start_flow(st, isn, f, offsets)
                first = offsets[2 * f]
                rtt_base = 2 * first
                zw_base = first
                n_rtt = 0
                n_zw = 0
                n_idle = 0
                # per flow: where the flow's next SACK block is searched from, FIN/RST seen (its
                # handshake rows and Wireshark's ts_first_rtt are in the state: tcp.handshake)
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
                r0 = np.int64(rows[np.uint64(i0)]) if i0 < end0 else NO_ROW
                r1 = np.int64(rows[np.uint64(i1)]) if i1 < end1 else NO_ROW
                # and the row after each, loaded when its direction moves on: the next choice then
                # waits for no load (a row loaded just then sat on the chain from one packet's
                # choice to the next one's: the pass's hottest instruction under perf)
                n0 = np.int64(rows[np.uint64(min(i0 + 1, last))])
                n1 = np.int64(rows[np.uint64(min(i1 + 1, last))])
                for _ in range(first, end1):
                    # the next packet in capture order: the earlier of the two directions' next ones
                    # (the directions alternate unpredictably: selects, the compiler's choice)
                    later = r1 < r0
                    fw = np.uint8(later)
                    r = min(r0, r1)
                    i = i1 if later else i0
                    if later:
                        i1 = i + 1
                        r1 = n1 if i1 < end1 else NO_ROW
                        n1 = np.int64(rows[np.uint64(min(i1 + 1, last))])
                    else:
                        i0 = i + 1
                        r0 = n0 if i0 < end0 else NO_ROW
                        n0 = np.int64(rows[np.uint64(min(i0 + 1, last))])
                    ur = np.uint64(r)  # unsigned indices: no negative-index wraparound per access
                    rv = fw ^ np.uint8(1)
                    o = np.int64(fw) * N_STATE  # this direction's state row ...
                    v = np.int64(rv) * N_STATE  # ... and the peer's
                    u = np.uint64(i)
                    n_blocks = 0
                    t = ts_ns[ur]
                    fl = tcp_flags[ur]
                    ln = np.int64(tcp_len[ur])
                    if ln == LONG_LENGTH:  # a TSO/GRO frame's payload, in full from its entry
                        ln = np.int64(long_len[np.searchsorted(long_rows, ur)])
                    w = np.int64(tcp_window[ur])
                    options = opt_options[ur]  # the SACK blocks and the timestamps bit
                    sack_count = min(options & OPTION_SACK_BLOCKS, 4)
                    out_frame[u] = r + 1
                    out_time[u] = t
                    out_len[u] = ln
                    is_ack = (fl & 0x10) != 0
                    is_syn = (fl & 0x02) != 0
                    syn_fin_rst = (fl & 0x07) != 0
                    syn_fin = (fl & 0x03) != 0

                    # relative, unwrapped sequence and acknowledgment numbers: the step from the last
                    # raw number, which is the ISN plus the last relative one (mod 2**32), is taken
                    # as a signed 32-bit difference (RFC 1982); no raw number to store per packet
                    raw = tcp_seq[ur]
                    rel = st[o + SEQ_REL]
                    s = rel + np.int64(np.int32(np.int64(raw) - st[o + ISN] - rel))
                    st[o + SEQ_REL] = s
                    out_seq[u] = np.int32(s)  # mod 2**32 (model.Segments.seq)
                    a = np.int64(0)
                    if is_ack:
                        raw = tcp_ack[ur]
                        rel = st[o + ACK_REL]
                        a = rel + np.int64(np.int32(np.int64(raw) - st[o + PEER_ISN] - rel))
                        st[o + ACK_REL] = a
                        n_blocks = sack_count
                        if n_blocks > 0:
                            e = first_at_or_after(block_row, r, block_from)
                            block_from = e + n_blocks
                            for j in range(n_blocks):
                                # edges relative to this ACK: 32-bit differences (RFC 1982)
                                ej = np.uint64(e + j)
                                left = np.int32(block_left[ej] - raw)
                                right = np.int32(block_right[ej] - raw)
                                # the direction's last SACK blocks, relative to the ISN (Karn, the
                                # peer's bytes in flight): nothing reads this direction's during
                                # its own packet, so they go straight to its state row
                                st[o + SACK_LO + j] = a + np.int64(left)
                                st[o + SACK_HI + j] = a + np.int64(right)
                    out_ack[u] = np.int32(a)

                    # handshake: Wireshark's window-scale rules, MSS, SACK-permitted, ts_first_rtt
                    follow_handshake(
                        st,
                        o,
                        v,
                        fw,
                        i,
                        r,
                        t,
                        is_syn,
                        is_ack,
                        hs_rows,
                        hs_wscale,
                        hs_mss,
                        hs_sack_perm,
                    )

                    # a FIN or RST between the SYN/ACK and the client's ACK ends that connection
                    # instance: a later ACK of the client (the port pair reused, or a stray
                    # packet) does not complete its handshake (no SYN/ACK → ACK time from it)
                    if (fl & 0x05) != 0 and st[SYNACK_I] >= 0 and st[HSACK_I] < 0:
                        st[HSACK_I] = NO_HANDSHAKE_ACK
                    # a SYN after a FIN or RST starts a new connection instance on the same ports
                    # and ISN (one flow, as Wireshark's tcp.stream keeps it): what each side
                    # acknowledged before is the earlier instance's. RFC 5961 §4: a SYN to a
                    # connection the server still holds gets a challenge ACK of the old sequence
                    # space, the client answers with a RST and retries the SYN (suricata's
                    # tls-subjectaltname stream 8: the challenge ACK, 976 MB ahead, left the
                    # server's highest ACK timing none of the new instance's data)
                    if (fl & 0x12) == 0x02 and fr != 0:
                        for q in (o, v):
                            st[q + MAXACK] = NOT_SEEN
                            st[q + SACKS] = 0
                    own = st[o + WS]
                    out_win[u] = w << own if (own > 0 and not is_syn) else w

                    if is_ack:
                        st[v + VALID_BIF] = 1

                    # Wireshark's tcp.analysis flags, from the state before this packet
                    ev, has_nxt, nxt = expert_events(
                        st, o, v, s, a, ln, w, fl, t, is_ack, syn_fin, syn_fin_rst
                    )

                    # a zero-window probe does not advance the expected sequence number
                    probe = (ev & ZERO_WINDOW_PROBE) != 0
                    end = s + ln + (1 if syn_fin else 0)
                    # a RST does not move the expected sequence number: Wireshark 4.0 flags none
                    # of the data after a RST whose number is far ahead (RFC 5961 §3.2: the RST
                    # answering a challenge ACK carries the old connection's number; suricata's
                    # tls-subjectaltname frames 251 and 259)
                    advances = not has_nxt or (end > nxt and (fl & 0x04) == 0)
                    if end > s and not probe:  # Karn: queued, or what it re-sends is ambiguous
                        queue_sent(st, o, i, s, end, advances, has_nxt, nxt, st[v + MAXACK], queue)
                    nxt = advance_sequence(st, o, s, t, end, advances, probe, has_nxt, nxt)

                    if is_ack:  # RTT samples: the segments this ACK (or its first SACK block) times
                        n_rtt = time_ack(
                            st,
                            o,
                            v,
                            i,
                            a,
                            t,
                            n_blocks,
                            queue,
                            out_time,
                            rtt_ack,
                            rtt_sent,
                            rtt_base,
                            n_rtt,
                        )
                    if (fl & 0x04) != 0:
                        # a RST ends the connection instance: nothing sent before it is timed by
                        # a later ACK (zeek's modbus-and-non-modbus-p502: a stray ACK 16 s after
                        # the RST made a 15.7 s "round trip")
                        for q in (o, v):
                            st[q + Q_HEAD] = st[q + Q_END]
                            st[q + SACK_CURSOR] = -1

                    if (fl & 0x06) == 0:
                        zw_open = st[o + ZW_OPEN]
                        if w == 0 and zw_open < 0:
                            st[o + ZW_OPEN] = i
                        elif w != 0 and zw_open >= 0:
                            zw[zw_base + n_zw, 0] = zw_open
                            zw[zw_base + n_zw, 1] = i
                            zw[zw_base + n_zw, 2] = 1
                            n_zw += 1
                            st[o + ZW_OPEN] = -1
                    st[o + WIN] = w
                    st[o + WIN_FROM_SYN] = is_syn
                    st[o + LASTACK] = a if is_ack else NOT_SEEN
                    if is_ack:
                        st[o + MAXACK] = max(st[o + MAXACK], a)
                        st[o + SACKS] = n_blocks
                    st[o + LASTACKTIME] = t
                    st[o + LASTSEGFLAGS] = ev

                    # bytes in flight after this data segment
                    bif[u] = bytes_in_flight(st, o, v, ln, nxt, syn_fin)
                    events[u] = ev

                    # Flows summaries: data range and re-sent data (the rule of tcp.resent.resent)
                    again = False
                    if ln > 0:
                        data_end = s + ln
                        if st[o + HAS_DATA] != 0:
                            again = s < st[o + DATA_HI] or (ev & RETRANSMISSION) != 0
                            st[o + DATA_LO] = min(st[o + DATA_LO], s)
                            st[o + DATA_HI] = max(st[o + DATA_HI], data_end)
                            # (min and max: a capture's clock may step back)
                            st[o + DATA_FIRST_NS] = min(st[o + DATA_FIRST_NS], t)
                            st[o + DATA_LAST_NS] = max(st[o + DATA_LAST_NS], t)
                        else:
                            again = (ev & RETRANSMISSION) != 0
                            st[o + DATA_LO] = s
                            st[o + DATA_HI] = data_end
                            st[o + DATA_FIRST_NS] = t
                            st[o + DATA_LAST_NS] = t
                            st[o + HAS_DATA] = 1
                        again = again and (ev & (KEEP_ALIVE | ZERO_WINDOW_PROBE)) == 0
                        if again:
                            st[o + RESENT] += 1
                    # the TCP flags and, above them, the SACK blocks and the re-sent bit, one store
                    # (model.TCP_FLAGS)
                    out_flags[u] = (
                        fl
                        | (np.uint16(sack_count) << SACK_COUNT_SHIFT)
                        | np.uint16(again) * RESENT_FLAG
                    )
                    if (fl & 0x12) == 0x02 and st[o + HAS_SYN] == 0:  # SYN without ACK
                        st[o + SYN_NS] = t
                        st[o + HAS_SYN] = 1
                    fr |= np.int64(fl & 0x01) | (np.int64(fl & 0x04) >> 1)  # FIN: bit 0, RST: bit 1
                    if options & OPTION_TIMESTAMPS:
                        st[o + HAS_TS] = 1
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
                    o = np.int64(d) * N_STATE
                    if st[o + ZW_OPEN] >= 0:
                        zw[zw_base + n_zw, 0] = st[o + ZW_OPEN]
                        zw[zw_base + n_zw, 1] = offsets[2 * f + d + 1] - 1  # the side's last row
                        zw[zw_base + n_zw, 2] = 0
                        n_zw += 1
                flow_first_ns[f] = lo_t
                flow_last_ns[f] = hi_t
                # the first SYN without ACK: the client's, else the server's
                first_syn_ns[f] = -1
                for d in range(2):
                    if st[(1 - d) * N_STATE + HAS_SYN] != 0:  # (the client's, read last, wins)
                        first_syn_ns[f] = st[(1 - d) * N_STATE + SYN_NS]
                syn_idx[f] = st[SYN_I]
                synack_idx[f] = st[SYNACK_I]
                hsack_idx[f] = max(st[HSACK_I], -1)  # (NO_HANDSHAKE_ACK: none)
                fin_rst[f] = fr
                for d in range(2):
                    o = np.int64(d) * N_STATE
                    ws[f, d] = st[o + WS]
                    mss[f, d] = st[o + MSS]
                    sack_perm[f, d] = st[o + SACK_PERM] != 0
                    data_lo[f, d] = st[o + DATA_LO]
                    data_hi[f, d] = st[o + DATA_HI]
                    data_first_ns[f, d] = st[o + DATA_FIRST_NS]
                    data_last_ns[f, d] = st[o + DATA_LAST_NS]
                    resent_n[f, d] = st[o + RESENT]
                    has_ts[f, d] = st[o + HAS_TS] != 0
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
