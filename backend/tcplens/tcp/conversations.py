"""Step 1 of the flow assignment (:mod:`tcplens.tcp.flows`): each part of the capture's local
conversations.

In parallel, each part of the capture (a range of PacketTable rows) gets its own small hash table
of conversations and tags every packet with a local conversation number and its direction; it
counts the packets of each local conversation and records the few packets where Wireshark's
conversation state machine may change (see ``_part``), which step 2
(:mod:`tcplens.tcp.instances`) runs over.

The hash tables are keyed with a per-process random seed and grow with the number of
conversations (open addressing, load ≤ 1/2): memory follows the conversations, never more
than the packets, and crafted addresses cannot aim at one slot.
"""

from __future__ import annotations

import numba
import numpy as np

from tcplens.capture.compiled import WORKERS, in_turn
from tcplens.capture.table import (
    ACK,
    COPY,
    MALFORMED,
    NOT_TCP,
    PARSED,
    SYN,
    UNSUPPORTED_LINK,
)
from tcplens.tcp.compiled import kernel, parallel_kernel

# a TCP packet: PARSED and none of these (the decoder sets PARSED without NOT_TCP for TCP
# only, so the IP protocol need not be read); a packet captured twice is analysed once, as its
# first copy (``capture.copies``)
_TCP_MASK = PARSED | NOT_TCP | MALFORMED | UNSUPPORTED_LINK | COPY
# consecutive packets of one conversation are taken BLOCK at a time (see _block) once a run
# of the same conversation has gone on for RUN_BEFORE_BLOCKS packets
BLOCK = 64
RUN_BEFORE_BLOCKS = 16


@kernel
def _slot(k0, k1, seed):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Hash of a conversation key (two 48-bit endpoints), keyed with the process's seed."""
    h = (k0 ^ seed) * np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(32)
    h = (h ^ k1) * np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(29)
    return h


@kernel
def rehash(keys, base, n, seed):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """A slot table (load ≤ 1/4 after growing) for the ``n`` keys at ``keys[base:]``."""
    size = 4
    while size < 4 * n:
        size *= 2
    slots = np.full(size, -1, np.int64)
    mask = np.uint64(size - 1)
    for k in range(n):
        s = _slot(keys[base + k, 0], keys[base + k, 1], seed) & mask
        while slots[s] >= 0:
            s = (s + np.uint64(1)) & mask
        slots[s] = k
    return slots


@kernel
def find_slot(slots, keys, base, k0, k1, seed):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Slot of key ``(k0, k1)``: its number in ``slots`` or the empty slot to put it in."""
    mask = np.uint64(slots.shape[0] - 1)
    s = _slot(k0, k1, seed) & mask
    while True:
        c = slots[s]
        if c < 0 or (keys[base + c, 0] == k0 and keys[base + c, 1] == k1):
            return s
        s = (s + np.uint64(1)) & mask


@parallel_kernel
def local_conversations(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    bounds, seed, status, src, dst, src_port, dst_port, flags,
    tag, keys, counts, event_row, event_tag, event_before, n_local, n_events,
):  # fmt: skip
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # on all cores (capture.compiled.WORKERS)
        for p in in_turn(taken, bounds.shape[0] - 1):
            n_local[p], n_events[p] = _part(
                bounds[p], bounds[p + 1], seed, status, src, dst, src_port, dst_port,
                flags, tag, keys, counts, event_row, event_tag, event_before,
            )  # fmt: skip


@kernel
def _part(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    lo, hi, seed, status, src, dst, src_port, dst_port, flags,
    tag, keys, counts, event_row, event_tag, event_before,
):  # fmt: skip
    """Local conversations of rows ``lo:hi`` (step 1 of the module docstring).

    ``tag[r]`` = 2 × local conversation + direction (0: the packet's source is the lower
    endpoint), -1 for rows that are not TCP. ``counts[lo + c]``: packets of local conversation
    c per direction.
    Recorded packets: ``event_row``, their tag, and their conversation's counts before them.
    """
    slots = np.full(16, -1, np.int64)
    # per local conversation, bit d: an instance whose base for direction 1 - d is not fixed
    # yet may have started with a packet sent in direction d (before or in this part)
    waiting = np.empty(8, np.uint8)
    n_conv = 0
    n_event = 0
    r = lo
    while True:
        r = _skip_not_tcp(r, hi, status, tag)
        if r == hi:
            return n_conv, n_event
        k0, k1, _ = _key(r, src, dst, src_port, dst_port)
        s = find_slot(slots, keys, lo, k0, k1, seed)
        c = slots[s]
        created = c < 0
        if created:
            c = n_conv
            n_conv += 1
            keys[lo + c, 0] = k0
            keys[lo + c, 1] = k1
            _store(counts, lo + c, 0, 0)
            if c == waiting.shape[0]:
                grown = np.empty(2 * c, np.uint8)
                grown[:c] = waiting
                waiting = grown
            waiting[c] = 3
            if 2 * n_conv > slots.shape[0]:
                slots = rehash(keys, lo, n_conv, seed)
            else:
                slots[s] = c
        r, w, n_event = _run(
            r, hi, lo, k0, k1, c, created, waiting[c], n_event, status, src, dst,
            src_port, dst_port, flags, tag, counts, event_row, event_tag, event_before,
        )  # fmt: skip
        waiting[c] = w


@kernel
def _skip_not_tcp(r, hi, status, tag):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The first TCP row from ``r`` on (``hi`` if none); rows skipped get tag -1."""
    while r < hi:
        st = status[r]
        if (st & _TCP_MASK) == PARSED:
            return r
        tag[r] = -1
        r += 1
    return hi


@kernel
def _key(r, src, dst, src_port, dst_port):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Conversation key of row ``r`` (lower endpoint, higher endpoint) and its direction."""
    a = (np.uint64(src[r]) << np.uint64(16)) | np.uint64(src_port[r])
    b = (np.uint64(dst[r]) << np.uint64(16)) | np.uint64(dst_port[r])
    return min(a, b), max(a, b), np.int64(a > b)


@kernel
def _run(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    r, hi, lo, k0, k1, c, created, waiting, n_event, status, src, dst, src_port, dst_port,
    flags, tag, counts, event_row, event_tag, event_before,
):  # fmt: skip
    """Rows from ``r`` on while they belong to local conversation ``c`` (key ``k0, k1``).

    Consecutive packets mostly belong to one conversation: they need no lookup, and its
    counts and waiting bits stay in registers (no arrays change size in this loop, so
    numba adds no reference counting to it). Inside a long run they are taken a block at a
    time (:func:`_block`) while no base is left to fix. Returns the first row of another
    conversation.
    """
    j = lo + c
    w = np.int64(waiting)
    n0, n1 = counts[j, 0], counts[j, 1]
    run = 0  # rows of this run so far (negative: a block just failed, not again soon)
    while r < hi:
        if run >= RUN_BEFORE_BLOCKS and w == 0 and not created and r + BLOCK <= hi:
            whole, b1 = _block(r, k0, k1, 2 * c, status, src, dst, src_port, dst_port, flags, tag)
            if whole:
                n0 += BLOCK - b1
                n1 += b1
                r += BLOCK
                continue
            run = -BLOCK  # the run ends or a SYN comes within the block: row by row past it
        run += 1
        st = status[r]
        if (st & _TCP_MASK) != PARSED:
            tag[r] = -1
            r += 1
            continue
        a, b, d = _key(r, src, dst, src_port, dst_port)
        if a != k0 or b != k1:
            break
        f = flags[r]
        if created or (f & SYN) != 0 or w != 0:
            # a packet fixes the base of its own direction, and with an ACK the other's
            fixes = (1 << (1 - d)) | ((1 << d) if (f & ACK) != 0 else 0)
            if created or (f & SYN) != 0 or (w & fixes) != 0:
                event_row[lo + n_event] = r
                event_tag[lo + n_event] = 2 * c + d
                _store(event_before, lo + n_event, n0, n1)
                n_event += 1
            w &= ~fixes
            if (f & SYN) != 0 and (f & ACK) == 0:
                w |= 1 << d  # a pure SYN may start an instance
            created = False
        # branch-free: directions alternate unpredictably
        n0 += 1 - d
        n1 += d
        tag[np.uint64(r)] = 2 * c + d  # unsigned index: no negative-index wraparound
        r += 1
    _store(counts, j, n0, n1)
    return r, w, n_event


@kernel
def _block(r, k0, k1, t0, status, src, dst, src_port, dst_port, flags, tag):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Rows ``r : r + BLOCK`` at once, if they are all TCP packets of conversation ``(k0, k1)``
    without SYN: then nothing but the counts changes (the caller checks that no base is left
    to fix) and this returns True and the packets of direction 1; tags ``t0 + direction`` are written.

    One branch-free pass that LLVM vectorises (bulk_5M: the step's CPU 26 → 7.5 ms), where
    :func:`_run` tests each row. When it returns False the tags it wrote are of rows not taken
    yet: the caller writes each of them again when it gets there.
    """
    bad = np.uint64(0)
    n1 = np.int64(0)
    for i in range(np.uint64(r), np.uint64(r + BLOCK)):  # unsigned: no wraparound checks
        a = (np.uint64(src[i]) << np.uint64(16)) | np.uint64(src_port[i])
        b = (np.uint64(dst[i]) << np.uint64(16)) | np.uint64(dst_port[i])
        d = np.int64(a > b)
        f = flags[i]
        bad |= (min(a, b) ^ k0) | (max(a, b) ^ k1)
        bad |= np.uint64((status[i] & _TCP_MASK) ^ PARSED) | np.uint64(f & SYN)
        n1 += d
        tag[i] = t0 + d
    return bad == 0, n1


@kernel
def _store(table, i, n0, n1):  # type: ignore[no-untyped-def]  # pragma: no cover
    table[i, 0] = n0
    table[i, 1] = n1
