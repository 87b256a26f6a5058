"""Wireshark's TCP expert analysis (``tcp.analysis.*``), bytes in flight and window headroom.

Wireshark decides each flag from a small per-direction state (next expected sequence number,
last ACK, last window, duplicate-ACK count, ...) updated packet by packet in capture order
(``tcp_analyze_sequence_number`` in epan/dissectors/packet-tcp.c). The flags depend on that
state, so this is a genuinely sequential state machine: one compiled pass over all packets of
all flows, sorted by ``(flow, frame)``, state reset at each flow's first packet. The rules and
their order follow Wireshark 4.0 so that the flags agree with what users see in Wireshark:

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

# Wireshark's thresholds (packet-tcp.c): a fast retransmission follows the last duplicate ACK
# within 20 ms; without a handshake RTT, "out of order" means within 3 ms of the highest segment.
FAST_RETRANSMISSION_WINDOW_NS = 20_000_000
OUT_OF_ORDER_DEFAULT_NS = 3_000_000


def analyze_events(
    flow: I32,
    direction: U8,
    time_ns: I64,
    seq: I64,
    payload_len: I64,
    flags: U16,
    ack: I64,
    window_raw: I64,
    peer_window_scale: I8,
    sack_count: U8,
    sack_left: I64,
    sack_right: I64,
) -> tuple[U32, I64, I64]:
    """Per-packet event bits, bytes in flight and window headroom, in the input's order.

    The input must be sorted by ``(flow, frame)``. ``seq`` is relative to the packet's own
    direction, ``ack`` and SACK edges to the other direction (see :mod:`tcplens.tcp.model`).
    ``peer_window_scale`` is the window-scale shift of the *other* side, the one whose
    advertised window bounds this packet's data (-1 unknown: no window_full, no headroom).

    Returns
    -------
    events, bytes_in_flight, window_headroom
        ``bytes_in_flight`` is -1 where not measured; ``window_headroom`` is
        :data:`~tcplens.tcp.model.UNKNOWN` where not measured.
    """
    events, bif, headroom = _kernel(
        flow,
        direction,
        time_ns,
        seq,
        payload_len,
        flags,
        ack,
        window_raw,
        peer_window_scale,
        sack_count,
        sack_left,
        sack_right,
    )
    return events, bif, headroom


@numba.njit(cache=True)
def _kernel(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    flow,
    direction,
    time_ns,
    seq,
    seglen,
    flags,
    ack,
    window,
    peer_scale,
    sack_count,
    sack_l,
    sack_r,
):
    n = flow.shape[0]
    events = np.zeros(n, np.uint32)
    bif = np.full(n, -1, np.int64)
    headroom = np.full(n, UNKNOWN, np.int64)
    # per-direction state, index 0/1 = direction
    nextseq = np.zeros(2, np.int64)
    has_nextseq = np.zeros(2, np.bool_)
    nextseqtime = np.zeros(2, np.int64)
    lastack = np.zeros(2, np.int64)
    has_lastack = np.zeros(2, np.bool_)
    lastacktime = np.zeros(2, np.int64)
    maxack = np.zeros(2, np.int64)  # highest ACK sent by the direction
    has_maxack = np.zeros(2, np.bool_)
    win = np.zeros(2, np.int64)
    has_win = np.zeros(2, np.bool_)
    win_from_syn = np.zeros(2, np.bool_)
    dupacknum = np.zeros(2, np.int64)
    lastsegflags = np.zeros(2, np.uint32)
    maxseqtobeacked = np.zeros(2, np.int64)
    has_maxseqtba = np.zeros(2, np.bool_)
    valid_bif = np.zeros(2, np.bool_)
    first_seq = np.zeros(2, np.int64)  # first sequence number the direction was seen to send
    sacks = np.zeros(2, np.int64)
    sack_lo = np.zeros((2, 4), np.int64)
    sack_hi = np.zeros((2, 4), np.int64)
    last_syn_time = -1
    first_rtt = 0
    for i in range(n):
        if i == 0 or flow[i] != flow[i - 1]:
            for d in range(2):
                has_nextseq[d] = False
                has_lastack[d] = False
                has_maxack[d] = False
                has_win[d] = False
                win_from_syn[d] = False
                dupacknum[d] = 0
                lastsegflags[d] = 0
                has_maxseqtba[d] = False
                valid_bif[d] = True  # Wireshark 4.0: valid until a capture gap
                sacks[d] = 0
            last_syn_time = -1
            first_rtt = 0
        fw = direction[i]
        rv = 1 - fw
        t = time_ns[i]
        s = seq[i]
        ln = seglen[i]
        fl = flags[i]
        a = ack[i]
        w = window[i]
        is_ack = (fl & 0x10) != 0
        syn_fin_rst = (fl & 0x07) != 0
        syn_fin = (fl & 0x03) != 0
        ev = np.uint32(0)

        # handshake RTT (Wireshark's ts_first_rtt): last pure SYN → first non-SYN ACK
        if (fl & 0x12) == 0x02:
            last_syn_time = t
        elif is_ack and (fl & 0x02) == 0 and first_rtt == 0 and last_syn_time >= 0:
            first_rtt = t - last_syn_time

        if is_ack:
            valid_bif[rv] = True

        # ZERO WINDOW PROBE
        zwp = ln == 1 and has_nextseq[fw] and s == nextseq[fw] and has_win[rv] and win[rv] == 0
        if zwp:
            ev |= ZERO_WINDOW_PROBE
        else:
            if w == 0 and not syn_fin_rst:
                ev |= ZERO_WINDOW
            if has_nextseq[fw] and s > nextseq[fw] and (fl & 0x04) == 0:
                ev |= LOST_SEGMENT
                valid_bif[fw] = False
            if (
                (ln == 0 or ln == 1)
                and has_nextseq[fw]
                and s == nextseq[fw] - 1
                and (fl & 0x07) == 0
            ):
                ev |= KEEP_ALIVE
            same_point = (
                ln == 0
                and has_nextseq[fw]
                and s == nextseq[fw]
                and has_lastack[fw]
                and is_ack
                and a == lastack[fw]
                and not syn_fin_rst
            )
            if same_point and w != 0 and (not has_win[fw] or w != win[fw]):
                ev |= WINDOW_UPDATE
            if ln > 0 and not syn_fin_rst and has_lastack[rv] and has_win[rv]:
                # the peer's scale; its SYN windows are never scaled (RFC 7323 §2.2)
                sc = peer_scale[i]
                if sc >= 0:
                    if win_from_syn[rv]:
                        sc = 0
                    room = lastack[rv] + (win[rv] << sc) - (s + ln)
                    headroom[i] = room
                    if room == 0:
                        ev |= WINDOW_FULL
            done = False
            repeated = same_point and has_win[fw] and w == win[fw]
            if repeated and w != 0 and lastsegflags[rv] & KEEP_ALIVE:
                ev |= KEEP_ALIVE_ACK
                done = True
            if not done and repeated and w == 0 and lastsegflags[rv] & ZERO_WINDOW_PROBE:
                ev |= ZERO_WINDOW_PROBE_ACK
                done = True
            if not done and same_point and w != 0 and has_win[fw] and w == win[fw]:
                if dupacknum[fw] == -1:
                    dupacknum[fw] = 1
                else:
                    dupacknum[fw] += 1
                ev |= DUPLICATE_ACK
        # finished_fwd: the ACK moved, so duplicate-ACK counting restarts
        if not (has_lastack[fw] and is_ack and a == lastack[fw]):
            dupacknum[fw] = 0

        # ACKED LOST PACKET: the ACK covers data the other direction was never seen to send
        if is_ack and has_maxseqtba[rv] and a > maxseqtobeacked[rv]:
            if maxseqtobeacked[rv] > nextseq[rv]:
                maxseqtobeacked[rv] = nextseq[rv]
                ev |= ACK_LOST_SEGMENT
            else:
                if dupacknum[rv] == 0:
                    ev |= ACK_LOST_SEGMENT
                dupacknum[rv] = -1

        # RETRANSMISSION / FAST RETRANSMISSION / OUT-OF-ORDER / SPURIOUS
        if (ln > 0 or syn_fin) and not (ev & KEEP_ALIVE):
            not_advanced = has_nextseq[fw] and s < nextseq[fw]
            if ln > 1 and has_nextseq[fw] and nextseq[fw] - 1 == s:
                not_advanced = False
            ooo_thres = first_rtt if first_rtt > 0 else OUT_OF_ORDER_DEFAULT_NS
            end_flag = 1 if syn_fin else 0
            if (
                not_advanced
                and dupacknum[rv] >= 2
                and has_lastack[rv]
                and lastack[rv] == s
                and t - lastacktime[rv] < FAST_RETRANSMISSION_WINDOW_NS
            ):
                ev |= FAST_RETRANSMISSION | RETRANSMISSION
            elif (
                not_advanced
                and t - nextseqtime[fw] < ooo_thres
                and nextseq[fw] != s + ln + end_flag
            ):
                ev |= OUT_OF_ORDER
            elif ln > 0 and has_lastack[rv] and s + ln <= lastack[rv]:
                ev |= SPURIOUS_RETRANSMISSION | RETRANSMISSION
            elif not_advanced:
                ev |= RETRANSMISSION

        end = s + ln + (1 if syn_fin else 0)
        # a zero-window probe does not advance the expected sequence number
        probe = (ev & ZERO_WINDOW_PROBE) != 0
        if (not has_nextseq[fw] or end > nextseq[fw]) and not probe:
            if not has_nextseq[fw]:
                first_seq[fw] = s
            nextseq[fw] = end
            has_nextseq[fw] = True
            nextseqtime[fw] = t
        if (not has_maxseqtba[fw] or s == maxseqtobeacked[fw]) and not probe:
            maxseqtobeacked[fw] = nextseq[fw]
            has_maxseqtba[fw] = True

        win[fw] = w
        has_win[fw] = True
        win_from_syn[fw] = (fl & 0x02) != 0
        if is_ack:
            lastack[fw] = a
            has_lastack[fw] = True
            if not has_maxack[fw] or a > maxack[fw]:
                maxack[fw] = a
                has_maxack[fw] = True
            k = sack_count[i]
            sacks[fw] = k
            for j in range(k):
                sack_lo[fw, j] = sack_l[i, j]
                sack_hi[fw, j] = sack_r[i, j]
        else:
            has_lastack[fw] = False
        lastacktime[fw] = t
        lastsegflags[fw] = ev

        # bytes in flight after this data segment: highest sequence sent minus the lowest
        # unacknowledged one, minus what the receiver holds according to its SACK blocks
        if ln > 0 and valid_bif[fw]:
            low = maxack[rv] if has_maxack[rv] else first_seq[fw]
            top = nextseq[fw]
            flight = top - low
            for j in range(sacks[rv]):
                lo = max(sack_lo[rv, j], low)
                hi = min(sack_hi[rv, j], top)
                if hi > lo:
                    flight -= hi - lo
            if syn_fin:
                flight -= 1
            if flight > 0:
                bif[i] = flight
        events[i] = ev
    return events, bif, headroom
