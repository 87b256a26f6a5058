"""Wireshark's TCP expert analysis (``tcp.analysis.*``), bytes in flight and window headroom.

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

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.flows import FlowAssignment
from tcplens.tcp.model import (
    ACK_LOST_SEGMENT,
    DUPLICATE_ACK,
    FAST_RETRANSMISSION,
    KEEP_ALIVE,
    KEEP_ALIVE_ACK,
    LOST_SEGMENT,
    OUT_OF_ORDER,
    RETRANSMISSION,
    SPURIOUS_RETRANSMISSION,
    UNKNOWN,
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


@dataclass(frozen=True)
class PacketAnalysis:
    """Per-packet results laid out in segment order (``position``), and per-flow facts."""

    packet_index: I32
    frame: U32
    time_ns: I64
    flags: U16
    payload_len: I32
    seq: I64  # relative, unwrapped
    ack: I64  # relative to the other direction's ISN (0 without the ACK flag)
    window: I32  # scaled advertised window (raw when the scale is unknown or on SYNs)
    sack_count: U8
    sack_rows: I64  # segment rows of the packets carrying SACK blocks, in capture order
    sack_left: I64  # (m, 4) relative like ``ack``, 0 for unused blocks
    sack_right: I64
    has_ts: B
    ts_val: U32
    ts_ecr: U32
    events: U32
    bytes_in_flight: I32
    window_headroom: I64
    syn: I64  # per flow: segment row of the last pure SYN before the SYN/ACK, -1
    synack: I64  # per flow: first SYN/ACK, -1
    handshake_ack: I64  # per flow: the client's first ACK after the SYN/ACK, -1
    window_scale: I8  # (n_flows, 2) client, server: 0..14, -1 unknown
    mss: I32  # (n_flows, 2): -1 absent
    sack_permitted: B  # per flow
    rtt_ack: I64  # data → ACK samples (segment rows): the acknowledging packet ...
    rtt_sent: I64  # ... and the data segment it times
    zero_windows: I64  # (k, 3): first zero-window row, reopening (or last) row, reopened


def analyze_events(packets: PacketTable, fa: FlowAssignment, position: I64) -> PacketAnalysis:
    """Run the per-packet state machine over the capture's TCP packets (see module doc).

    ``position[i]`` is the segment row of TCP packet ``i``; every per-packet output is written
    there directly, so laying the series out by flow direction costs no extra gathers.
    """
    isn = np.stack([fa.isn_client, fa.isn_server], axis=1)
    n_sacking = int(np.count_nonzero(packets.sack_count[fa.rows]))
    r = _kernel(
        n_sacking,
        fa.rows,
        fa.flow,
        fa.direction,
        position,
        isn,
        packets.frame,
        packets.ts_ns,
        packets.tcp_seq,
        packets.tcp_ack,
        packets.tcp_flags,
        packets.tcp_window,
        packets.tcp_payload_len,
        packets.wscale,
        packets.mss,
        packets.sack_perm,
        packets.sack_count,
        packets.sack_left,
        packets.sack_right,
        packets.has_ts,
        packets.ts_val,
        packets.ts_ecr,
    )
    return PacketAnalysis(*r)


@numba.njit(cache=True, inline="always")
def _end_of(row, seq, length, flags):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Sequence number after a segment: payload plus one for SYN or FIN (RFC 9293)."""
    return seq[row] + length[row] + (1 if (flags[row] & 0x03) != 0 else 0)


@numba.njit(cache=True)
def _grow2(a, size):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    out = np.empty((size, a.shape[1]), a.dtype)
    out[: a.shape[0]] = a
    return out


@numba.njit(cache=True)
def _kernel(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    n_sacking,
    rows,
    flow,
    direction,
    position,
    isn,
    frame_no,
    ts_ns,
    tcp_seq,
    tcp_ack,
    tcp_flags,
    tcp_window,
    tcp_len,
    opt_wscale,
    opt_mss,
    opt_sack_perm,
    opt_sack_count,
    opt_sack_left,
    opt_sack_right,
    opt_has_ts,
    opt_ts_val,
    opt_ts_ecr,
):
    n = rows.shape[0]
    nf = isn.shape[0]
    out_row = np.empty(n, np.int32)
    out_frame = np.empty(n, np.uint32)
    out_time = np.empty(n, np.int64)
    out_flags = np.empty(n, np.uint16)
    out_len = np.empty(n, np.int32)
    out_sack_count = np.empty(n, np.uint8)
    out_has_ts = np.empty(n, np.bool_)
    out_ts_val = np.empty(n, np.uint32)
    out_ts_ecr = np.empty(n, np.uint32)
    # Karn bookkeeping: per direction a FIFO (linked through q_next) of the segments that
    # advanced the sequence space and are not yet cumulatively acknowledged
    # (a queued segment's start, end and time are read back from its segment row q_pos)
    # int32 indices: a packet table never holds 2**31 packets, and these are n-sized
    q_pos = np.empty(n, np.int32)
    q_next = np.empty(n, np.int32)
    q_ambiguous = np.zeros(n, np.bool_)
    q_sacked = np.zeros(n, np.bool_)
    n_queued = 0
    q_head = np.full((nf, 2), -1, np.int64)
    q_tail = np.full((nf, 2), -1, np.int64)
    sack_cursor = np.full((nf, 2), -1, np.int64)
    rtt_ack = np.empty(n, np.int32)
    rtt_sent = np.empty(n, np.int32)
    n_rtt = 0
    out_seq = np.empty(n, np.int64)
    out_ack = np.zeros(n, np.int64)
    out_win = np.empty(n, np.int32)
    events = np.zeros(n, np.uint32)
    bif = np.full(n, -1, np.int32)
    headroom = np.full(n, UNKNOWN, np.int64)
    # SACK blocks are rare (loss recovery only): kept compactly, one row per SACKing packet
    out_sack_pos = np.empty(n_sacking, np.int64)
    out_sl = np.zeros((n_sacking, 4), np.int64)
    out_sr = np.zeros((n_sacking, 4), np.int64)
    n_sack = 0
    # zero-window spans (RFC 9293 §3.8.6.1) per direction; SYN and RST windows do not count
    zw_open = np.full((nf, 2), -1, np.int64)  # row of the first zero advertisement, or -1
    last_row = np.full((nf, 2), -1, np.int64)
    zw_cap = 64
    zw = np.empty((zw_cap, 3), np.int64)  # start row, end row, reopened
    n_zw = 0
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
    for j0 in range(n):
        r = rows[j0]
        f = flow[j0]
        fw = direction[j0]
        rv = 1 - fw
        i = position[j0]  # every per-packet output goes to the packet's segment row
        t = ts_ns[r]
        fl = tcp_flags[r]
        ln = np.int64(tcp_len[r])
        w = np.int64(tcp_window[r])
        out_row[i] = r
        out_frame[i] = frame_no[r]
        out_time[i] = t
        out_flags[i] = fl
        out_len[i] = ln
        out_sack_count[i] = min(opt_sack_count[r], 4)
        out_has_ts[i] = opt_has_ts[r]
        out_ts_val[i] = opt_ts_val[r]
        out_ts_ecr[i] = opt_ts_ecr[r]
        is_ack = (fl & 0x10) != 0
        is_syn = (fl & 0x02) != 0
        syn_fin_rst = (fl & 0x07) != 0
        syn_fin = (fl & 0x03) != 0

        # relative, unwrapped sequence and acknowledgment numbers
        raw = tcp_seq[r]
        if has_seq[f, fw]:
            s = seq_rel[f, fw] + np.int64(np.int32(raw - seq_raw[f, fw]))
        else:
            s = np.int64(np.int32(raw - isn[f, fw]))
            has_seq[f, fw] = True
        seq_raw[f, fw] = raw
        seq_rel[f, fw] = s
        out_seq[i] = s
        a = np.int64(0)
        if is_ack:
            raw = tcp_ack[r]
            if has_ack[f, fw]:
                a = ack_rel[f, fw] + np.int64(np.int32(raw - ack_raw[f, fw]))
            else:
                a = np.int64(np.int32(raw - isn[f, rv]))
                has_ack[f, fw] = True
            ack_raw[f, fw] = raw
            ack_rel[f, fw] = a
            out_ack[i] = a
            k = min(opt_sack_count[r], 4)
            if k > 0:
                sack_row = n_sack
                n_sack += 1
                out_sack_pos[sack_row] = i
                for j in range(k):
                    out_sl[sack_row, j] = a + np.int64(np.int32(opt_sack_left[r, j] - raw))
                    out_sr[sack_row, j] = a + np.int64(np.int32(opt_sack_right[r, j] - raw))

        # handshake: Wireshark's window-scale rules, MSS, SACK-permitted, ts_first_rtt
        if is_syn:
            opt = np.int8(min(opt_wscale[r], MAX_WINDOW_SHIFT))
            if not is_ack:
                if synack_idx[f] < 0:
                    syn_idx[f] = i
                mss[f, fw] = opt_mss[r]
                sack_perm[f, fw] = opt_sack_perm[r]
                if opt_wscale[r] < 0:
                    ws[f, 0] = -2
                    ws[f, 1] = -2
                else:
                    ws[f, fw] = opt
                last_syn_time[f] = t
            elif synack_idx[f] < 0:
                synack_idx[f] = i
                mss[f, fw] = opt_mss[r]
                sack_perm[f, fw] = opt_sack_perm[r]
                if opt_wscale[r] < 0:
                    ws[f, 0] = -2
                    ws[f, 1] = -2
                elif ws[f, rv] == -2:
                    ws[f, fw] = -2
                else:
                    ws[f, fw] = opt
        elif is_ack:
            if first_rtt[f] == 0 and last_syn_time[f] >= 0:
                first_rtt[f] = t - last_syn_time[f]
            if fw == 0 and synack_idx[f] >= 0 and hsack_idx[f] < 0:
                hsack_idx[f] = i
        own = ws[f, fw]
        out_win[i] = w << own if (own > 0 and not is_syn) else w

        if is_ack:
            valid_bif[f, rv] = True

        ev = np.uint32(0)
        # ZERO WINDOW PROBE
        if (
            ln == 1
            and has_nextseq[f, fw]
            and s == nextseq[f, fw]
            and has_win[f, rv]
            and win[f, rv] == 0
        ):
            ev |= ZERO_WINDOW_PROBE
        else:
            if w == 0 and not syn_fin_rst:
                ev |= ZERO_WINDOW
            if has_nextseq[f, fw] and s > nextseq[f, fw] and (fl & 0x04) == 0:
                ev |= LOST_SEGMENT
                valid_bif[f, fw] = False
            if (
                (ln == 0 or ln == 1)
                and has_nextseq[f, fw]
                and s == nextseq[f, fw] - 1
                and (fl & 0x07) == 0
            ):
                ev |= KEEP_ALIVE
            same_point = (
                ln == 0
                and has_nextseq[f, fw]
                and s == nextseq[f, fw]
                and has_lastack[f, fw]
                and is_ack
                and a == lastack[f, fw]
                and not syn_fin_rst
            )
            if same_point and w != 0 and (not has_win[f, fw] or w != win[f, fw]):
                ev |= WINDOW_UPDATE
            if ln > 0 and not syn_fin_rst and has_lastack[f, rv] and has_win[f, rv]:
                # the peer's scale; its SYN windows are never scaled (RFC 7323 §2.2)
                sc = ws[f, rv]
                if sc != -1:
                    if sc < 0 or win_from_syn[f, rv]:
                        sc = 0
                    room = lastack[f, rv] + (win[f, rv] << sc) - (s + ln)
                    headroom[i] = room
                    if room == 0:
                        ev |= WINDOW_FULL
            done = False
            repeated = same_point and has_win[f, fw] and w == win[f, fw]
            if repeated and w != 0 and lastsegflags[f, rv] & KEEP_ALIVE:
                ev |= KEEP_ALIVE_ACK
                done = True
            if not done and repeated and w == 0 and lastsegflags[f, rv] & ZERO_WINDOW_PROBE:
                ev |= ZERO_WINDOW_PROBE_ACK
                done = True
            if not done and repeated and w != 0:
                if dupacknum[f, fw] == -1:
                    dupacknum[f, fw] = 1
                else:
                    dupacknum[f, fw] += 1
                ev |= DUPLICATE_ACK
        # finished_fwd: the ACK moved, so duplicate-ACK counting restarts
        if not (has_lastack[f, fw] and is_ack and a == lastack[f, fw]):
            dupacknum[f, fw] = 0

        # ACKED LOST PACKET: the ACK covers data the other direction was never seen to send
        if is_ack and has_maxseqtba[f, rv] and a > maxseqtobeacked[f, rv]:
            if maxseqtobeacked[f, rv] > nextseq[f, rv]:
                maxseqtobeacked[f, rv] = nextseq[f, rv]
                ev |= ACK_LOST_SEGMENT
            else:
                if dupacknum[f, rv] == 0:
                    ev |= ACK_LOST_SEGMENT
                dupacknum[f, rv] = -1

        # RETRANSMISSION / FAST RETRANSMISSION / OUT-OF-ORDER / SPURIOUS
        if (ln > 0 or syn_fin) and not (ev & KEEP_ALIVE):
            not_advanced = has_nextseq[f, fw] and s < nextseq[f, fw]
            if ln > 1 and has_nextseq[f, fw] and nextseq[f, fw] - 1 == s:
                not_advanced = False
            ooo_thres = first_rtt[f] if first_rtt[f] > 0 else OUT_OF_ORDER_DEFAULT_NS
            end_flag = 1 if syn_fin else 0
            if (
                not_advanced
                and dupacknum[f, rv] >= 2
                and has_lastack[f, rv]
                and lastack[f, rv] == s
                and t - lastacktime[f, rv] < FAST_RETRANSMISSION_WINDOW_NS
            ):
                ev |= FAST_RETRANSMISSION | RETRANSMISSION
            elif (
                not_advanced
                and t - nextseqtime[f, fw] < ooo_thres
                and nextseq[f, fw] != s + ln + end_flag
            ):
                ev |= OUT_OF_ORDER
            elif ln > 0 and has_lastack[f, rv] and s + ln <= lastack[f, rv]:
                ev |= SPURIOUS_RETRANSMISSION | RETRANSMISSION
            elif not_advanced:
                ev |= RETRANSMISSION

        # a zero-window probe does not advance the expected sequence number
        probe = (ev & ZERO_WINDOW_PROBE) != 0
        end = s + ln + (1 if syn_fin else 0)
        if end > s and not probe:
            if not has_nextseq[f, fw] or end > nextseq[f, fw]:
                # new data (maybe partly resent): queue it for Karn's rule
                q = n_queued
                n_queued += 1
                q_pos[q] = i
                q_next[q] = -1
                q_ambiguous[q] = has_nextseq[f, fw] and s < nextseq[f, fw]
                if q_tail[f, fw] >= 0:
                    q_next[q_tail[f, fw]] = q
                else:
                    q_head[f, fw] = q
                q_tail[f, fw] = q
            else:
                # sent again: every queued segment it overlaps is now ambiguous (Karn)
                e = q_head[f, fw]
                while e >= 0 and out_seq[q_pos[e]] < end:
                    if _end_of(q_pos[e], out_seq, out_len, out_flags) > s:
                        q_ambiguous[e] = True
                    e = q_next[e]
        if (not has_nextseq[f, fw] or end > nextseq[f, fw]) and not probe:
            if not has_nextseq[f, fw]:
                first_seq[f, fw] = s
            nextseq[f, fw] = end
            has_nextseq[f, fw] = True
            nextseqtime[f, fw] = t
        if (not has_maxseqtba[f, fw] or s == maxseqtobeacked[f, fw]) and not probe:
            maxseqtobeacked[f, fw] = nextseq[f, fw]
            has_maxseqtba[f, fw] = True

        if is_ack:
            # RTT (RFC 6298 Karn): an ACK that advances times the newest segment it covers,
            # unless a segment in the newly covered range was sent more than once
            if not has_maxack[f, fw] or a > maxack[f, fw]:
                newest = -1
                clean = True
                e = q_head[f, rv]
                while e >= 0 and _end_of(q_pos[e], out_seq, out_len, out_flags) <= a:
                    newest = e
                    clean = clean and not q_ambiguous[e]
                    e = q_next[e]
                q_head[f, rv] = e
                if e < 0:
                    q_tail[f, rv] = -1
                if newest >= 0 and clean and t >= out_time[q_pos[newest]]:
                    rtt_ack[n_rtt] = i
                    rtt_sent[n_rtt] = q_pos[newest]
                    n_rtt += 1
            # SACK (RFC 2018 §4): the first block ends at the most recently received segment
            if opt_sack_count[r] > 0 and out_sr[n_sack - 1, 0] > a:
                right = out_sr[n_sack - 1, 0]
                e = sack_cursor[f, rv]
                if e < 0 or _end_of(q_pos[e], out_seq, out_len, out_flags) > right:
                    e = q_head[f, rv]
                while e >= 0 and _end_of(q_pos[e], out_seq, out_len, out_flags) < right:
                    e = q_next[e]
                if e >= 0:
                    sack_cursor[f, rv] = e
                    end_e = _end_of(q_pos[e], out_seq, out_len, out_flags)
                    if end_e == right and not q_ambiguous[e] and not q_sacked[e]:
                        q_sacked[e] = True
                        if t >= out_time[q_pos[e]]:
                            rtt_ack[n_rtt] = i
                            rtt_sent[n_rtt] = q_pos[e]
                            n_rtt += 1

        if (fl & 0x06) == 0:
            if w == 0 and zw_open[f, fw] < 0:
                zw_open[f, fw] = i
            elif w != 0 and zw_open[f, fw] >= 0:
                if n_zw == zw_cap:
                    zw_cap *= 2
                    zw = _grow2(zw, zw_cap)
                zw[n_zw, 0] = zw_open[f, fw]
                zw[n_zw, 1] = i
                zw[n_zw, 2] = 1
                n_zw += 1
                zw_open[f, fw] = -1
        last_row[f, fw] = i
        win[f, fw] = w
        has_win[f, fw] = True
        win_from_syn[f, fw] = is_syn
        if is_ack:
            lastack[f, fw] = a
            has_lastack[f, fw] = True
            if not has_maxack[f, fw] or a > maxack[f, fw]:
                maxack[f, fw] = a
                has_maxack[f, fw] = True
            k = min(opt_sack_count[r], 4)
            sacks[f, fw] = k
            for j in range(k):
                sack_lo[f, fw, j] = out_sl[n_sack - 1, j]
                sack_hi[f, fw, j] = out_sr[n_sack - 1, j]
        else:
            has_lastack[f, fw] = False
        lastacktime[f, fw] = t
        lastsegflags[f, fw] = ev

        # bytes in flight after this data segment: highest sequence sent minus the peer's
        # highest ACK, minus what the peer holds according to its last SACK blocks
        if ln > 0 and valid_bif[f, fw]:
            low = maxack[f, rv] if has_maxack[f, rv] else first_seq[f, fw]
            top = nextseq[f, fw]
            flight = top - low
            for j in range(sacks[f, rv]):
                lo = max(sack_lo[f, rv, j], low)
                hi = min(sack_hi[f, rv, j], top)
                if hi > lo:
                    flight -= hi - lo
            if syn_fin:
                flight -= 1
            if 0 < flight < 2**31:  # Wireshark also drops absurd values (> 2e9)
                bif[i] = flight
        events[i] = ev
    for f in range(nf):  # spans still closed when the capture ends
        for d in range(2):
            if zw_open[f, d] >= 0:
                if n_zw == zw_cap:
                    zw_cap *= 2
                    zw = _grow2(zw, zw_cap)
                zw[n_zw, 0] = zw_open[f, d]
                zw[n_zw, 1] = last_row[f, d]
                zw[n_zw, 2] = 0
                n_zw += 1
    scale = np.where(ws == -2, np.int8(0), ws)
    sack_ok = sack_perm[:, 0] & sack_perm[:, 1]
    return (
        out_row,
        out_frame,
        out_time,
        out_flags,
        out_len,
        out_seq,
        out_ack,
        out_win,
        out_sack_count,
        out_sack_pos[:n_sack].copy(),
        out_sl[:n_sack].copy(),
        out_sr[:n_sack].copy(),
        out_has_ts,
        out_ts_val,
        out_ts_ecr,
        events,
        bif,
        headroom,
        syn_idx,
        synack_idx,
        hsack_idx,
        scale,
        mss,
        sack_ok,
        rtt_ack[:n_rtt].astype(np.int64),
        rtt_sent[:n_rtt].astype(np.int64),
        zw[:n_zw].copy(),
    )
