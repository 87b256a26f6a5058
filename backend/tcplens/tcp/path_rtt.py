"""Each flow's *path* round-trip time (min, median, p95) from its data → ACK samples: see
:func:`path_rtt`. Part of :func:`tcplens.tcp.rtt.rtt_samples`' first pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.tcp.compiled import inline_kernel, kernel

I64 = npt.NDArray[np.int64]

RTT_CLIP_NS = (1 << 40) - 1  # about 18 minutes: longer samples count as this in the statistics


@dataclass(frozen=True)
class PathRtt:
    """Per flow path round-trip time (see :func:`path_rtt`), -1 without any sample."""

    min_ns: I64
    median_ns: I64
    p95_ns: I64  # nearest rank
    data_ack_min_ns: I64  # (F, 2): smallest data → ACK sample timing direction d's data, -1


@inline_kernel
def path_rtt(values, vb, nd, c0, c1, syn_rtt, synack_rtt, stats, f):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Min, median and p95 (nearest rank) of the *path* round-trip time; -1 without any.

    The path RTT is end to end: client → server → client, wherever the capture sat. A data → ACK
    sample only times the part beyond the capture point towards the data's receiver, so at a
    capture near the receiver it is the receiver's own ACK turnaround (tens of µs), not the
    path. So each flow is summarised from the data → ACK samples of one direction, the one with
    the most samples (the bulk of the data), each plus the round trip from the capture point
    back to that direction's sender: the handshake half on the sender's side (SYN/ACK → ACK
    for the client's data, SYN → SYN/ACK for the server's; about 0 at a sender-side capture and
    what completes a mid-path one). Without a handshake that half is the smallest data → ACK
    sample of the other direction (it times the same stretch), else 0.

    ``values[vb : vb + c0]`` are direction 0's samples, ``values[vb + nd - c1 : vb + nd]``
    direction 1's (clipped at :data:`RTT_CLIP_NS`); they are reordered here.
    """
    bulk = 1 if c1 > c0 else 0  # client → server on a tie
    if bulk == 0:
        lo, c, o_lo, c_other, half = vb, c0, vb + nd - c1, c1, synack_rtt
    else:
        lo, c, o_lo, c_other, half = vb + nd - c1, c1, vb, c0, syn_rtt
    if half < 0:
        half = 0
        if c_other > 0:
            half = values[o_lo]
            for j in range(o_lo + 1, o_lo + c_other):
                half = min(half, values[j])
    if c > 0:
        # order statistics by selection, not a sort: O(n) instead of O(n log n)
        mid = lo + (c - 1) // 2
        p95 = lo + np.int64(np.ceil(0.95 * c)) - 1
        select(values, lo, lo + c, mid)
        if p95 > mid:
            select(values, mid + 1, lo + c, p95)
        smallest = values[mid]
        for j in range(lo, mid):  # the values below the median are left before it
            smallest = min(smallest, values[j])
        stats[f, 0] = smallest + half
        stats[f, 1] = values[mid] + half
        stats[f, 2] = values[p95] + half
    else:
        stats[f, 0] = -1
        stats[f, 1] = -1
        stats[f, 2] = -1


@kernel
def select(v, lo, hi, k):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Put the value of rank ``k`` of ``v[lo:hi]`` at ``v[k]``, smaller ones before it and larger
    ones after (C++'s ``nth_element``): Hoare's quickselect with a median-of-three pivot,
    falling back to a sort after ~2 log2(n) rounds so that no input, however crafted, makes it
    quadratic (Musser's introselect).

    Each round is a three-way partition (RTT samples repeat) made of two branch-free Lomuto
    passes: the values below the pivot to the front, then, only if rank ``k`` is not among
    them, the values equal to it. Which side a sample falls on is a coin toss the branch
    predictor loses half the time; moving every value unconditionally costs less (at 5M
    packets this was a quarter of the RTT statistics' time)."""
    budget = 8
    n = hi - lo
    while n > 1:
        budget += 2
        n >>= 1
    while hi - lo > 16:
        if budget == 0:
            break
        budget -= 1
        a = v[lo]
        b = v[lo + ((hi - lo) >> 1)]
        c = v[hi - 1]
        if a > b:
            a, b = b, a
        pivot = max(a, min(b, c))
        # v[lo:lt] < pivot <= v[lt:i] (unsigned indices: no negative-index wraparound)
        lt = np.uint64(lo)
        for i in range(np.uint64(lo), np.uint64(hi)):
            x = v[i]
            v[i] = v[lt]
            v[lt] = x
            lt += np.uint64(x < pivot)
        if k < lt:
            hi = np.int64(lt)
            continue
        # v[lt:eq] == pivot < v[eq:i]: the pivot is one of the values, so eq > lt
        eq = lt
        for i in range(lt, np.uint64(hi)):
            x = v[i]
            v[i] = v[eq]
            v[eq] = x
            eq += np.uint64(x == pivot)
        if k < eq:
            return
        lo = np.int64(eq)
    v[lo:hi].sort()
