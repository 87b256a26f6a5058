"""Karn's rule for the data → ACK RTT samples, as :func:`tcplens.tcp.events.flow_events` walks.

Each direction's segments that advanced the sequence number wait in a queue (Segments rows
linked through ``q_next``) until an ACK covers them (RFC 6298 §3, Karn): an ACK that advances
times the newest segment it covers, unless a segment of the newly covered range was sent more
than once; a SACK block (RFC 2018 §4) whose right edge ends a queued segment times that segment.
"""

from __future__ import annotations

from tcplens.tcp.compiled import inline_kernel
from tcplens.tcp.model import EVENT_NAMES
from tcplens.tcp.walk_state import MAXACK, Q_HEAD, Q_TAIL, SACK_CURSOR

# Karn bookkeeping bits of a queued segment, kept in its ``events`` above the event kinds while
# its flow is walked (no array of their own: fresh memory is the main per-packet cost, issue 4)
# and cleared when the flow is done
AMBIGUOUS = 1 << 14  # part of its sequence range was sent more than once: no RTT sample from it
SACKED = 1 << 15  # a SACK block already timed it
EVENT_BITS = (1 << 14) - 1
assert len(EVENT_NAMES) <= 14  # the event kinds leave the two top bits of the uint16 free


@inline_kernel
def end_of(row, seq, length, flags):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Sequence number after a segment: payload plus one for SYN or FIN (RFC 9293)."""
    return seq[row] + length[row] + (1 if (flags[row] & 0x03) != 0 else 0)


@inline_kernel
def queue_sent(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st, o, i, u, s, end, advances, has_nxt, nxt, q_next, events, out_seq, out_len, out_flags
):
    """Segment ``i`` (``u`` unsigned, ``s .. end``) of the direction with state row ``o`` was sent: queued if it
    advances the sequence number, else every queued segment it overlaps becomes ambiguous.
    Returns the Karn bits of segment ``i`` itself (ambiguous if it re-sends part of its range)."""
    karn = 0
    if advances:
        # new data (maybe partly resent): queue it for Karn's rule
        q_next[u] = -1
        karn = AMBIGUOUS if (has_nxt and s < nxt) else 0
        tail = st[o + Q_TAIL]
        if tail >= 0:
            q_next[tail] = i
        else:
            st[o + Q_HEAD] = i
        st[o + Q_TAIL] = i
    else:
        # sent again: every queued segment it overlaps is now ambiguous (Karn)
        e = st[o + Q_HEAD]
        while e >= 0 and out_seq[e] < end:
            if end_of(e, out_seq, out_len, out_flags) > s:
                events[e] |= AMBIGUOUS
            e = q_next[e]
    return karn


@inline_kernel
def time_ack(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st,
    o,
    v,
    i,
    a,
    t,
    has_maxack,
    n_blocks,
    blocks,
    q_next,
    events,
    out_seq,
    out_len,
    out_flags,
    out_time,
    rtt_ack,
    rtt_sent,
    rtt_base,
    n_rtt,
):
    """ACK ``i`` (``a``, time ``t``, SACK ``blocks`` relative to the ISN) of the direction with
    state row ``o`` times the peer's (``v``) queued segments it covers: the samples go to
    ``rtt_ack``/``rtt_sent`` from ``rtt_base + n_rtt``; returns the new count ``n_rtt``."""
    # RTT (RFC 6298 Karn): an ACK that advances times the newest segment it covers,
    # unless a segment in the newly covered range was sent more than once
    if not has_maxack or a > st[o + MAXACK]:
        newest = -1
        clean = True
        e = st[v + Q_HEAD]
        while e >= 0 and end_of(e, out_seq, out_len, out_flags) <= a:
            newest = e
            clean = clean and (events[e] & AMBIGUOUS) == 0
            e = q_next[e]
        st[v + Q_HEAD] = e
        if e < 0:
            st[v + Q_TAIL] = -1
        if newest >= 0 and clean and t >= out_time[newest]:
            rtt_ack[rtt_base + n_rtt] = i
            rtt_sent[rtt_base + n_rtt] = newest
            n_rtt += 1
    # SACK (RFC 2018 §4): the first block ends at the most recently received segment
    if n_blocks > 0 and blocks[0, 1] > a:
        right = blocks[0, 1]
        e = st[v + SACK_CURSOR]
        if e < 0 or end_of(e, out_seq, out_len, out_flags) > right:
            e = st[v + Q_HEAD]
        while e >= 0 and end_of(e, out_seq, out_len, out_flags) < right:
            e = q_next[e]
        if e >= 0:
            st[v + SACK_CURSOR] = e
            end_e = end_of(e, out_seq, out_len, out_flags)
            if end_e == right and (events[e] & (AMBIGUOUS | SACKED)) == 0:
                events[e] |= SACKED
                if t >= out_time[e]:
                    rtt_ack[rtt_base + n_rtt] = i
                    rtt_sent[rtt_base + n_rtt] = e
                    n_rtt += 1
    return n_rtt


@inline_kernel
def clear_karn_bits(events, first, end):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The flow's rows ``first .. end`` are walked: their Karn bits are done with."""
    for j in range(first, end):
        events[j] &= EVENT_BITS
