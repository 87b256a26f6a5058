"""Karn's rule for the data → ACK RTT samples, as :func:`tcplens.tcp.events.flow_events` walks.

Each direction's segments that advanced the sequence number wait in a queue until an ACK covers
them (RFC 6298 §3, Karn): an ACK that advances times the newest segment it covers, unless a
segment of the newly covered range was sent more than once; a SACK block (RFC 2018 §4) whose
right edge ends a queued segment times that segment.

A queued segment's Segments rows come in capture order within its direction, so the queue is
not a linked list: it is the direction's rows from ``Q_HEAD`` on that carry a span, each row's
Karn word (``karn_rows``, one int32 per Segments row of the flow, from its first row ``base``,
written as the walk passes the row) says whether the row was queued and how far it reaches.
Nothing reads a flow's words once the walk has left it, so one flow's at a time are kept: a
buffer per chunk of flows, as long as its longest flow, which stays in the cache (a column of
the whole capture's rows cost 4 fresh bytes a packet, issue 4). A walk then reads the next row, not a link
it first has to load, and a row's end is two loads (its sequence number and span), not four.
A row's sequence number is stored mod 2**32 (``Segments.seq``): :func:`near` reads it back
next to the number it is compared with.
"""

from __future__ import annotations

import numpy as np

from tcplens.tcp.compiled import inline_kernel
from tcplens.tcp.walk_state import MAXACK, Q_HEAD, Q_TAIL, SACK_CURSOR, SACK_HI

# A row's Karn word: NOT_QUEUED, or its span (sequence numbers it takes: payload, plus one for
# SYN or FIN; a payload is at most 65,535 bytes, the IP length fields are 16-bit) with flags
NOT_QUEUED = -1
SPAN = (1 << 28) - 1
AMBIGUOUS = 1 << 28  # part of its sequence range was sent more than once: no RTT sample from it
SACKED = 1 << 29  # a SACK block already timed it
# the last row queued before the queue ran empty: the queue as a linked list had no link from
# it to the rows queued later, so a SACK search from an older row stops there
CHAIN_END = 1 << 30


@inline_kernel
def near(stored, ref):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """The number whose low 32 bits are ``stored`` nearest to ``ref`` (int64): the serial
    arithmetic of RFC 1982, Wireshark's LT_SEQ/GT_SEQ (packet-tcp.c). Exact while the two are
    less than 2**31 apart: a queued segment is unacknowledged data, within the window
    (< 2**30, RFC 7323 §2.3) of the numbers it is compared with."""
    return ref + np.int64(np.int32(np.int64(stored) - ref))


@inline_kernel
def queue_sent(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st, o, i, s, end, advances, has_nxt, nxt, karn_rows, base, out_seq
):
    """Segment ``i`` (``s .. end``) of the direction with state row ``o`` was sent: queued if it
    advances the sequence number, else every queued segment it overlaps becomes ambiguous.
    Returns the Karn word of row ``i`` itself (ambiguous if it re-sends part of its range)."""
    if advances:
        # new data (maybe partly resent): queue it for Karn's rule
        st[o + Q_TAIL] = i
        return (end - s) | (AMBIGUOUS if (has_nxt and s < nxt) else 0)
    # sent again: every queued segment it overlaps is now ambiguous (Karn)
    e = st[o + Q_HEAD]
    while e < i:
        ue = np.uint64(e)  # (unsigned: no negative-index wraparound per access)
        uk = np.uint64(e - base)
        k = karn_rows[uk]
        if k >= 0:
            seq_e = near(out_seq[ue], end)
            if seq_e >= end:
                break
            if seq_e + (k & SPAN) > s:
                karn_rows[uk] = k | AMBIGUOUS
        e += 1
    return NOT_QUEUED


@inline_kernel
def time_ack(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st,
    o,
    v,
    i,
    a,
    t,
    n_blocks,
    peer_next,
    karn_rows,
    base,
    out_seq,
    out_time,
    rtt_ack,
    rtt_sent,
    rtt_base,
    n_rtt,
):
    """ACK ``i`` (``a``, time ``t``, ``n_blocks`` SACK blocks, already in the state row ``o``
    of its direction) times the peer's (``v``) queued segments it covers, the peer's rows before
    ``peer_next`` walked: the samples go to ``rtt_ack``/``rtt_sent`` from ``rtt_base + n_rtt``;
    returns the new count ``n_rtt``."""
    # RTT (RFC 6298 Karn): an ACK that advances times the newest segment it covers,
    # unless a segment in the newly covered range was sent more than once
    if a > st[o + MAXACK]:  # (NOT_SEEN before the first ACK)
        newest = -1
        clean = True
        e = st[v + Q_HEAD]
        while e < peer_next:
            ue = np.uint64(e)
            k = karn_rows[np.uint64(e - base)]
            if k >= 0:
                if near(out_seq[ue], a) + (k & SPAN) > a:
                    break
                newest = e
                clean &= (k & AMBIGUOUS) == 0  # (no short-circuit branch)
            e += 1
        st[v + Q_HEAD] = e
        if e == peer_next and st[v + Q_TAIL] >= 0:  # the queue ran empty
            karn_rows[np.uint64(st[v + Q_TAIL] - base)] |= CHAIN_END
            st[v + Q_TAIL] = -1
        if newest >= 0 and clean and t >= out_time[np.uint64(newest)]:
            rtt_ack[np.uint64(rtt_base + n_rtt)] = i
            rtt_sent[np.uint64(rtt_base + n_rtt)] = newest
            n_rtt += 1
    # SACK (RFC 2018 §4): the first block ends at the most recently received segment
    if n_blocks > 0 and st[o + SACK_HI] > a:
        right = st[o + SACK_HI]
        e = st[v + SACK_CURSOR]
        if (
            e < 0
            or near(out_seq[np.uint64(e)], right) + (karn_rows[np.uint64(e - base)] & SPAN) > right
        ):
            e = st[v + Q_HEAD]
        # the first queued segment from there that reaches the block's right edge
        while e < peer_next:
            ue = np.uint64(e)
            uk = np.uint64(e - base)
            k = karn_rows[uk]
            if k >= 0:
                end_e = near(out_seq[ue], right) + (k & SPAN)
                if end_e >= right:
                    st[v + SACK_CURSOR] = e
                    if end_e == right and (k & (AMBIGUOUS | SACKED)) == 0:
                        karn_rows[uk] = k | SACKED
                        if t >= out_time[ue]:
                            rtt_ack[np.uint64(rtt_base + n_rtt)] = i
                            rtt_sent[np.uint64(rtt_base + n_rtt)] = e
                            n_rtt += 1
                    break
                if k & CHAIN_END:
                    break
            e += 1
    return n_rtt
