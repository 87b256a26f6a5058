"""Wireshark's TCP expert analysis (``tcp.analysis.*``) and bytes in flight, one packet at a time.

Wireshark decides each flag from a small per-direction state (next expected sequence number,
last ACK, last window, duplicate-ACK count, ...) updated packet by packet in capture order
(``tcp_analyze_sequence_number`` in epan/dissectors/packet-tcp.c); :func:`tcplens.tcp.events.
flow_events` walks each flow and calls these rules with that state (:mod:`tcplens.tcp.walk_state`).
The rules and their order follow Wireshark 4.0 so that the flags agree with what users see in
Wireshark:

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
* ack_lost_segment: an ACK beyond the other direction's highest contiguous sequence number
  ("ACKed segment that wasn't captured"), once per hole (see the rule's comment).
* spurious / fast retransmission, out_of_order, retransmission, decided in this order: a data
  segment the peer had already acknowledged in full is spurious (checked first, as in 4.0);
  else a segment with data (or SYN/FIN) that does not advance the sequence number is fast if
  it follows >= 2 duplicate ACKs for its sequence number within 20 ms, out-of-order if it
  comes within the handshake RTT (3 ms without one) of the highest segment, else a
  retransmission.
  Fast and spurious retransmissions also carry ``retransmission``, as in Wireshark's output.

Bytes in flight follow Wireshark 4.0 (highest sequence sent minus the peer's ACK, minus the
bytes in the peer's last SACK blocks, RFC 2018) with one deliberate difference: SACK blocks are
clipped to the unacknowledged range first. A D-SACK block (RFC 2883) reports a duplicate
*below* the cumulative ACK; Wireshark subtracts it anyway and understates what is in flight.
"""

from __future__ import annotations

import numpy as np

from tcplens.tcp.compiled import inline_kernel
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
    WINDOW_FULL,
    WINDOW_UPDATE,
    ZERO_WINDOW,
    ZERO_WINDOW_PROBE,
    ZERO_WINDOW_PROBE_ACK,
)
from tcplens.tcp.walk_state import (
    DUPACKNUM,
    FIRST_RTT,
    FIRST_SEQ,
    LASTACK,
    LASTACKTIME,
    LASTSEGFLAGS,
    MAXACK,
    MAXSEQTOBEACKED,
    NEXTSEQ,
    NEXTSEQTIME,
    NOT_SEEN,
    SACK_HI,
    SACK_LO,
    SACKS,
    VALID_BIF,
    WIN,
    WIN_FROM_SYN,
    WS,
)

# Wireshark's thresholds (packet-tcp.c): a fast retransmission follows the last duplicate ACK
# within 20 ms; without a handshake RTT, "out of order" means within 3 ms of the highest segment.
FAST_RETRANSMISSION_WINDOW_NS = 20_000_000
OUT_OF_ORDER_DEFAULT_NS = 3_000_000


@inline_kernel
def expert_events(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st, o, v, s, a, ln, w, fl, t, is_ack, syn_fin, syn_fin_rst
):
    """The ``tcp.analysis`` flags of a packet of the direction whose state row is ``o`` (``v``
    the peer's): relative sequence number ``s``, ACK ``a``, payload ``ln``, raw window ``w``,
    flags ``fl``, time ``t``. Updates the duplicate-ACK counts, the peer's highest sequence to
    be acknowledged and whether bytes in flight are valid; returns ``(events, has_nextseq,
    nextseq)``, the last two as they were before the packet."""
    # the state this packet's rules read, loaded once (the output stores above and
    # below could alias any array, so the compiler would reload them at every use)
    nxt = st[o + NEXTSEQ]
    has_nxt = nxt != NOT_SEEN
    lack = st[o + LASTACK]
    has_lack = lack != NOT_SEEN
    win = st[o + WIN]
    has_win = win >= 0
    lack_v = st[v + LASTACK]
    has_lack_v = lack_v != NOT_SEEN
    win_v = st[v + WIN]
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
            st[o + VALID_BIF] = 0
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
            sc = st[v + WS]
            if sc != -1:
                if sc < 0 or st[v + WIN_FROM_SYN] != 0:
                    sc = 0
                # the right edge (tcp.window.window_headroom is this on demand)
                if lack_v + (win_v << sc) == s + ln:
                    ev |= WINDOW_FULL
        done = False
        repeated = same_point and has_win and w == win
        if repeated and w != 0 and st[v + LASTSEGFLAGS] & KEEP_ALIVE:
            ev |= KEEP_ALIVE_ACK
            done = True
        if not done and repeated and w == 0 and st[v + LASTSEGFLAGS] & ZERO_WINDOW_PROBE:
            ev |= ZERO_WINDOW_PROBE_ACK
            done = True
        if not done and repeated and w != 0:
            if st[o + DUPACKNUM] == -1:  # (an ack_lost_segment was held: see below)
                st[o + DUPACKNUM] = 1
            else:
                st[o + DUPACKNUM] += 1
            ev |= DUPLICATE_ACK
    # finished_fwd: the ACK moved, so duplicate-ACK counting restarts
    if not (has_lack and is_ack and a == lack):
        st[o + DUPACKNUM] = 0

    # ACKED LOST PACKET: the ACK covers data beyond the other direction's highest contiguous
    # sequence number (maxseqtobeacked), i.e. data the capture never saw. Where the other
    # direction's own segments left a hole (its maxseqtobeacked below its nextseq), the bound
    # moves to its nextseq and the ACK is flagged; else the ACK is flagged only if no such ACK
    # was since the other direction's ACK last changed (its DUPACKNUM: -1 holds the flag, its
    # next duplicate ACK makes it 1). TShark 4.0.17 on pcaps built to tell the candidate rules
    # apart (test_events.py): "move the bound to nextseq" alone flags every ACK of data never
    # seen at all (arkime_aerospike frames 6-8), "hold until the ACK changes" alone re-flags
    # after a hole already reported (9790 false flags on the real-world corpus, issue 27).
    if is_ack and st[v + MAXSEQTOBEACKED] != NOT_SEEN and a > st[v + MAXSEQTOBEACKED]:
        if st[v + MAXSEQTOBEACKED] < st[v + NEXTSEQ]:
            st[v + MAXSEQTOBEACKED] = st[v + NEXTSEQ]
            ev |= ACK_LOST_SEGMENT
        else:
            if st[v + DUPACKNUM] == 0:
                ev |= ACK_LOST_SEGMENT
            st[v + DUPACKNUM] = -1

    # RETRANSMISSION / FAST RETRANSMISSION / OUT-OF-ORDER / SPURIOUS
    if (ln > 0 or syn_fin) and not (ev & KEEP_ALIVE):
        not_advanced = has_nxt and s < nxt
        if ln > 1 and has_nxt and nxt - 1 == s:
            not_advanced = False
        first_rtt = st[FIRST_RTT]
        ooo_thres = first_rtt if first_rtt > 0 else OUT_OF_ORDER_DEFAULT_NS
        end_flag = 1 if syn_fin else 0
        if ln > 0 and has_lack_v and s + ln <= lack_v:
            ev |= SPURIOUS_RETRANSMISSION | RETRANSMISSION
        elif (
            not_advanced
            and st[v + DUPACKNUM] >= 2
            and has_lack_v
            and lack_v == s
            and t - st[v + LASTACKTIME] < FAST_RETRANSMISSION_WINDOW_NS
        ):
            ev |= FAST_RETRANSMISSION | RETRANSMISSION
        elif not_advanced and t - st[o + NEXTSEQTIME] < ooo_thres and nxt != s + ln + end_flag:
            ev |= OUT_OF_ORDER
        elif not_advanced:
            ev |= RETRANSMISSION
    return ev, has_nxt, nxt


@inline_kernel
def advance_sequence(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st, o, s, t, end, advances, probe, has_nxt, nxt
):
    """The next expected sequence number after a segment ``s .. end`` (a zero-window probe
    does not advance it) and the highest one to be acknowledged; returns the new nextseq."""
    if advances and not probe:
        if not has_nxt:
            st[o + FIRST_SEQ] = s
        nxt = end
        st[o + NEXTSEQ] = end
        st[o + NEXTSEQTIME] = t
    tba = st[o + MAXSEQTOBEACKED]
    if (tba == NOT_SEEN or s == tba) and not probe:
        st[o + MAXSEQTOBEACKED] = nxt
    return nxt


@inline_kernel
def bytes_in_flight(st, o, v, ln, nxt, syn_fin):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Bytes in flight after a data segment: highest sequence sent minus the peer's highest
    ACK, minus what the peer holds according to its last SACK blocks; -1 when not valid."""
    flight_out = -1
    if ln > 0 and st[o + VALID_BIF] != 0:
        low = st[v + MAXACK]
        if low == NOT_SEEN:
            low = st[o + FIRST_SEQ]
        top = nxt
        flight = top - low
        for j in range(st[v + SACKS]):
            lo = max(st[v + SACK_LO + j], low)
            hi = min(st[v + SACK_HI + j], top)
            if hi > lo:
                flight -= hi - lo
        if syn_fin:
            flight -= 1
        if 0 < flight < 2**31:  # Wireshark also drops absurd values (> 2e9)
            flight_out = flight
    return flight_out
