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
    data_ack_median_ns: I64  # (F, 2): their median (an even count's: the middle two's mean), -1


@inline_kernel
def path_rtt(values, vb, nd, c0, c1, syn_rtt, synack_rtt, stats, f, scratch):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Min, median and p95 (nearest rank) of the *path* round-trip time; -1 without any.

    The path RTT is end to end: client → server → client, wherever the capture sat. A data → ACK
    sample only times the part beyond the capture point towards the data's receiver, so at a
    capture near the receiver it is the receiver's own ACK turnaround (tens of µs), not the
    path. So each flow is summarised from the data → ACK samples of one direction, the one with
    the most samples (the bulk of the data), each plus the round trip from the capture point
    back to that direction's sender: the handshake half on the sender's side (SYN/ACK → ACK
    for the client's data, SYN → SYN/ACK for the server's; about 0 at a sender-side capture and
    what completes a mid-path one), or the median data → ACK sample of the other direction
    where that is smaller (it times the same stretch: a handshake answered late, e.g. a client
    whose ACK of the SYN/ACK left 200 ms after it, is not the path's round trip; the median, not
    the smallest, so one stray sample does not replace a good handshake). Without a handshake
    that half is the smallest data → ACK sample of the other direction, else 0.

    ``values[vb : vb + c0]`` are direction 0's samples, ``values[vb + nd - c1 : vb + nd]``
    direction 1's (clipped at :data:`RTT_CLIP_NS`); they may be reordered here. ``scratch`` is
    the caller's int64 array of :func:`scratch_size` (nd) values or more. Each direction's
    median data → ACK sample (:func:`median`) goes to ``stats[f, 5 + d]`` (-1 without), the
    path's min, median (the lower middle sample) and p95 to ``stats[f, 0:3]``.
    """
    bulk = 1 if c1 > c0 else 0  # client → server on a tie
    if bulk == 0:
        lo, c, o_lo, c_other, half = vb, c0, vb + nd - c1, c1, synack_rtt
    else:
        lo, c, o_lo, c_other, half = vb + nd - c1, c1, vb, c0, syn_rtt
    stats[f, 5] = -1
    stats[f, 6] = -1
    if c_other > 0:
        k_other = (c_other - 1) // 2
        smallest_other, mid_other, _ = order_stats(values, o_lo, c_other, k_other, k_other, scratch)
        half = smallest_other if half < 0 else min(half, mid_other)
        stats[f, 6 - bulk] = median(values, o_lo, c_other, mid_other, scratch)
    elif half < 0:
        half = 0
    if c > 0:
        k_mid = (c - 1) // 2
        k_p95 = np.int64(np.ceil(0.95 * c)) - 1
        smallest, mid, p95 = order_stats(values, lo, c, k_mid, k_p95, scratch)
        stats[f, 0] = smallest + half
        stats[f, 1] = mid + half
        stats[f, 2] = p95 + half
        stats[f, 5 + bulk] = median(values, lo, c, mid, scratch)
    else:
        stats[f, 0] = -1
        stats[f, 1] = -1
        stats[f, 2] = -1


@inline_kernel
def median(values, lo, c, lower, scratch):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The median of ``values[lo : lo + c]`` given ``lower``, its value of rank (c - 1) // 2:
    of an even count, the mean of the two middle values (the usual median, Python's
    ``statistics.median``: two samples of 0.2 and 21.8 ms are 11 ms, not 0.2)."""
    if c % 2 == 1:
        return lower
    k = c // 2
    _, upper, _ = order_stats(values, lo, c, k, k, scratch)
    return (lower + upper) // 2


# order_stats: up to FEW values, selection in place; more, each rank is bracketed by two values of
# a sample of SAMPLE values, SPREAD sample ranks either side of where the rank falls in the sample
FEW = 512
SAMPLE = 64
SPREAD = 6


@inline_kernel
def scratch_size(c):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Values of scratch :func:`order_stats` needs for ``c`` values (and for fewer)."""
    return SAMPLE + 2 * (c // 4 + 65)


@kernel
def order_stats(values, lo, c, k1, k2, scratch):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The smallest value and the values of ranks ``k1 <= k2`` of ``values[lo : lo + c]`` (which
    may be reordered); ``scratch`` holds :func:`scratch_size` (c) int64 values or more.

    Selection in place (:func:`select`) takes ~5 passes over the values for both ranks. With
    many, one pass does (Floyd and Rivest's sampling): a few evenly spaced values are sorted,
    and the two sample values around where each rank should fall bracket it; the pass counts
    the values below each bracket and copies those inside it (about a fifth), without branches
    (whether a value falls inside is a coin toss). The rank is then selected among the copies.
    If a bracket missed its rank or holds too many values (crafted or much repeated values),
    the selection runs in place after all: the results are the same either way.
    """
    if c > FEW:
        sample = scratch[:SAMPLE]
        for i in range(SAMPLE):
            sample[i] = values[lo + (i * c) // SAMPLE]
        sample.sort()
        at1 = (k1 * SAMPLE) // c
        at2 = (k2 * SAMPLE) // c
        a1 = sample[max(0, at1 - SPREAD)]
        b1 = sample[min(SAMPLE - 1, at1 + SPREAD)]
        a2 = sample[max(0, at2 - SPREAD)]
        b2 = sample[min(SAMPLE - 1, at2 + SPREAD)]
        # each bracket's copies, one slot more than they may fill: the last takes the overflow
        most = c // 4 + 64
        inside1 = scratch[SAMPLE : SAMPLE + most + 1]
        inside2 = scratch[SAMPLE + most + 1 : SAMPLE + 2 * (most + 1)]
        n1 = np.uint64(0)
        n2 = np.uint64(0)
        below1 = 0
        below2 = 0
        smallest = values[lo]
        for j in range(np.uint64(lo), np.uint64(lo + c)):  # unsigned: no wraparound
            x = values[j]
            smallest = min(smallest, x)
            below1 += x < a1
            below2 += x < a2
            inside1[min(n1, np.uint64(most))] = x
            n1 += np.uint64((x >= a1) & (x <= b1))
            inside2[min(n2, np.uint64(most))] = x
            n2 += np.uint64((x >= a2) & (x <= b2))
        j1 = k1 - below1
        j2 = k2 - below2
        m1 = np.int64(n1)
        m2 = np.int64(n2)
        if m1 <= most and m2 <= most and 0 <= j1 < m1 and 0 <= j2 < m2:
            select(inside1, 0, m1, j1)
            select(inside2, 0, m2, j2)
            return smallest, inside1[j1], inside2[j2]
    select(values, lo, lo + c, lo + k1)
    if k2 > k1:
        select(values, lo + k1 + 1, lo + c, lo + k2)
    smallest = values[lo + k1]
    for j in range(lo, lo + k1):  # the values below rank k1 are left before it
        smallest = min(smallest, values[j])
    return smallest, values[lo + k1], values[lo + k2]


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
    if hi - lo <= 16:
        # insertion sort: numba's sort of a slice costs ~0.1 µs a call, which made this most of
        # rtt_samples' time on short flows (short_100k, one thread: 45.6 → 19.1 ms)
        for i in range(lo + 1, hi):
            x = v[i]
            j = i - 1
            while j >= lo and v[j] > x:
                v[j + 1] = v[j]
                j -= 1
            v[j + 1] = x
        return
    v[lo:hi].sort()
