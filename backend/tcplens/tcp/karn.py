"""Karn's rule for the data → ACK RTT samples, as :func:`tcplens.tcp.events.flow_events` walks.

Each direction's segments that advanced the sequence number wait in a queue until an ACK covers
them (RFC 6298 §3, Karn): an ACK that advances times the newest segment it covers, unless a
byte of the newly covered range was sent more than once (also: re-sent into a hole of the
capture), or it acknowledges beyond the newest covered segment bytes never seen sent; a SACK
block (RFC 2018 §4) whose right edge ends a queued segment times that segment.

The queue of a direction is an array of its queued segments (``queue``, one row of
``ENTRY`` int64 per segment: its Segments row, its Karn word, where it ends, a skip link), in
the order they were sent, from ``Q_HEAD`` (the first not yet acknowledged) to ``Q_END``; a
flow's two directions keep theirs in the region of the buffer that their Segments rows take
(one buffer per chunk of flows, as long as its longest flow). A segment is queued only when it
advances the sequence number, so the ends of the queued segments rise strictly: the segment an
ACK or a SACK block reaches, and the first one a re-sent range overlaps, are found by binary
search. Walking the Segments rows in between instead, as an earlier version did, made every
re-sent or duplicated segment and every SACK block cost as much as the segments and pure ACKs
sent since the oldest unacknowledged one: quadratic in a capture of one segment sent a million
times (issue 31: 100k / 200k / 400k copies took 3.2 / 9.4 / 33.8 s). A re-sent range then
marks each queued segment it overlaps as ambiguous, each segment once: the skip links lead past
the segments already marked (a union-find with path halving, Tarjan 1975), so one range re-sent
a million times over a window of tiny segments costs no more than sending it once.

Entries not marked ambiguous when queued started at or above every earlier entry's end (they
re-send nothing): they are in sequence order, and a walk over them from the first overlapping
entry stops at the first one starting at or above the re-sent range's end, as a walk over every
entry would.
"""

from __future__ import annotations

import numpy as np

from tcplens.tcp.compiled import inline_kernel
from tcplens.tcp.walk_state import (
    MAXACK,
    NO_ROW,
    Q_END,
    Q_HEAD,
    SACK_CURSOR,
    SACK_HI,
    SACK_LIMIT,
)

# a queue entry's fields (one row of ``queue``)
ROW = 0  # the segment's Segments row
WORD = 1  # its Karn word: span (sequence numbers it takes) and the flags below
END = 2  # its end, unwrapped (relative to the ISN, as the walk's numbers)
SKIP = 3  # an entry at or before the next entry not marked ambiguous (see find_unmarked)
ENTRY = 4
SPAN = (1 << 28) - 1  # payload (< 2**16) plus one for SYN or FIN
AMBIGUOUS = 1 << 28  # part of its sequence range was sent more than once: no RTT sample from it
SACKED = 1 << 29  # a SACK block already timed it
# sequence space right before it was never seen sent (it started beyond its sender's next
# sequence number: Wireshark's "previous segment not captured")
GAP_BEFORE = 1 << 30


@inline_kernel
def first_end_above(queue, lo, hi, x):  # type: ignore[no-untyped-def]  # pragma: no cover
    """First entry ``j`` in ``lo .. hi`` (``hi`` if none) whose end is above ``x``: the ends
    rise strictly. Galloping from ``lo``, then a binary search: an ACK usually covers one or
    two entries and a SACK block reaches the entry after the last one's, so the usual search
    costs what a walk over those entries did, and no search more than twice the logarithm of
    the queue's length."""
    if lo >= hi or queue[np.uint64(lo), END] > x:
        return lo
    step = 1
    at = lo + 1
    while at < hi and queue[np.uint64(at), END] <= x:  # queue[lo] <= x < the answer
        lo = at
        step *= 2
        at = lo + step
    lo += 1
    hi = min(at, hi)
    while lo < hi:
        mid = (lo + hi) >> 1
        if queue[np.uint64(mid), END] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@inline_kernel
def find_unmarked(queue, j, stop):  # type: ignore[no-untyped-def]  # pragma: no cover
    """First entry at or after ``j`` (before ``stop``) not marked ambiguous; ``stop`` if none.

    A marked entry's skip link leads to a later entry with only marked ones in between (an
    unmarked entry's to the next one); each marked entry passed links past the marked entry
    it led to (path halving)."""
    while j < stop and (queue[np.uint64(j), WORD] & AMBIGUOUS) != 0:
        uj = np.uint64(j)
        nxt = queue[uj, SKIP]
        if nxt < stop and (queue[np.uint64(nxt), WORD] & AMBIGUOUS) != 0:
            queue[uj, SKIP] = queue[np.uint64(nxt), SKIP]
        j = nxt
    return j


@inline_kernel
def queue_sent(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    st, o, i, s, end, advances, has_nxt, nxt, acked, queue
):
    """Segment ``i`` (``s .. end``) of the direction with state row ``o`` was sent: queued if it
    advances the sequence number, else every queued segment it overlaps becomes ambiguous, and
    so does the segment after a hole it re-sends into (``acked``: the peer's highest ACK). (A
    packet captured twice is no send: ``capture.copies`` marks the copy, which the walk
    skips.)"""
    q_end = st[o + Q_END]
    if advances:
        # new data (maybe partly resent: then ambiguous itself): queue it for Karn's rule
        u = np.uint64(q_end)
        queue[u, ROW] = i
        queue[u, WORD] = (
            (end - s)
            | (AMBIGUOUS if (has_nxt and s < nxt) else 0)
            | (GAP_BEFORE if (has_nxt and s > nxt) else 0)
        )
        queue[u, END] = end
        queue[u, SKIP] = q_end + 1
        st[o + Q_END] = q_end + 1
        return
    j = first_end_above(queue, st[o + Q_HEAD], q_end, s)
    # sent again: every queued segment it overlaps is now ambiguous (Karn)
    # and where it re-sends bytes never seen sent (its first or last byte unacknowledged in a
    # hole of the capture), the segment after the hole: an ACK that covers it covers the hole,
    # filled by this resend or by the first transmission the capture missed (suricata's
    # tcp-rst-unacked-stream-10: a hole re-sent 16 s after the segment beyond it was sent,
    # then both acknowledged, 16 s "round trip" in Wireshark's ack_rtt)
    first = max(s, acked)
    if first < end:
        k = j
        for byte in (first, end - 1):
            k = first_end_above(queue, k, q_end, byte)
            if k < q_end:
                u = np.uint64(k)
                if queue[u, END] - (queue[u, WORD] & SPAN) > byte:
                    queue[u, WORD] |= AMBIGUOUS
    j = find_unmarked(queue, j, q_end)
    while j < q_end:
        u = np.uint64(j)
        word = queue[u, WORD]
        if queue[u, END] - (word & SPAN) >= end:
            break
        queue[u, WORD] = word | AMBIGUOUS
        j = find_unmarked(queue, j + 1, q_end)


@inline_kernel
def time_ack(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
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
):
    """ACK ``i`` (``a``, time ``t``, ``n_blocks`` SACK blocks, already in the state row ``o``
    of its direction) times the peer's (``v``) queued segments it covers: the samples go to
    ``rtt_ack``/``rtt_sent`` from ``rtt_base + n_rtt``; returns the new count ``n_rtt``."""
    # RTT (RFC 6298 Karn): an ACK that advances times the newest segment it covers,
    # unless a byte of the newly acknowledged range was sent more than once (queue_sent), or
    # it acknowledges bytes beyond the newest that the capture never saw sent: the newest
    # segment it answers was not captured (Wireshark times only an ACK that ends a captured
    # segment; pcapplusplus_ldap: ACKs of data sampled out of the capture, 216 s)
    q_end = st[v + Q_END]
    if a > st[o + MAXACK]:  # (NOT_SEEN before the first ACK)
        head = st[v + Q_HEAD]
        covered = first_end_above(queue, head, q_end, a)
        if covered > head:
            # the newly covered entries: the newest is timed if none of them is ambiguous
            clean = True
            for j in range(head, covered):
                clean &= (queue[np.uint64(j), WORD] & AMBIGUOUS) == 0  # (no branch)
            # acknowledged beyond the newest: those bytes must be the next entry's, sent once
            if a > queue[np.uint64(covered - 1), END]:
                after = queue[np.uint64(min(covered, q_end - 1)), WORD]
                clean &= covered < q_end and (after & (AMBIGUOUS | GAP_BEFORE)) == 0
            newest = queue[np.uint64(covered - 1), ROW]
            st[v + Q_HEAD] = covered
            # the queue ran empty: the chain of entries the cursor is in (if open) ends here
            if covered == q_end and st[v + SACK_LIMIT] == NO_ROW and st[v + SACK_CURSOR] >= 0:
                st[v + SACK_LIMIT] = q_end
            if clean and t >= out_time[np.uint64(newest)]:
                rtt_ack[np.uint64(rtt_base + n_rtt)] = i
                rtt_sent[np.uint64(rtt_base + n_rtt)] = newest
                n_rtt += 1
    # SACK (RFC 2018 §4): the first block ends at the most recently received segment
    if n_blocks > 0 and st[o + SACK_HI] > a:
        right = st[o + SACK_HI]
        # the first queued segment that reaches the block's right edge: from where the last
        # search stopped, unless that one reaches beyond the edge (then from the head); a search
        # from the cursor stays within the chain of entries the cursor is in (the entries queued
        # until the queue last ran empty), as the linked list of an earlier version did
        e = st[v + SACK_CURSOR]
        stop = q_end
        if e < 0 or queue[np.uint64(e), END] > right:
            e = st[v + Q_HEAD]
            limit = NO_ROW
        else:
            limit = st[v + SACK_LIMIT]
            stop = min(stop, limit)
        e = first_end_above(queue, e, stop, right - 1)
        if e < stop:
            u = np.uint64(e)
            st[v + SACK_CURSOR] = e
            st[v + SACK_LIMIT] = limit
            word = queue[u, WORD]
            if queue[u, END] == right and (word & (AMBIGUOUS | SACKED)) == 0:
                queue[u, WORD] = word | SACKED
                row = queue[u, ROW]
                if t >= out_time[np.uint64(row)]:
                    rtt_ack[np.uint64(rtt_base + n_rtt)] = i
                    rtt_sent[np.uint64(rtt_base + n_rtt)] = row
                    n_rtt += 1
    return n_rtt
