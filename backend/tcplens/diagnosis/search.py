"""numpy's ``searchsorted`` and ``interp``, compiled, with numpy's exact answers.

The period labelling (``labelling.py``) asks, for every interval between two data segments,
what the sender had seen of the receiver's ACK stream: searches whose consecutive keys land
close together. A gallop from the previous answer makes each O(1) instead of a binary search;
on a sorted array the answer is unique, so it is numpy's. On an unsorted one (a capture whose
clock stepped back) numpy's own binary search is replayed, hint included: the labels never
depend on which implementation answered.
"""

from __future__ import annotations

import numba
import numpy as np

# first: points numba at the core's kernel cache (tcplens.kernel_cache), which is keyed on every
# module of the core, before the diagnosis's kernels are defined (this module is imported first)
import tcplens.capture.compiled  # noqa: F401


@numba.njit(cache=True, inline="always")
def _lt(a, b):  # type: ignore[no-untyped-def]
    """numpy's sort order: NaN after every number (``Tag::less`` of npysort)."""
    return a < b or (b != b and a == a)


@numba.njit(cache=True, inline="always")
def _before(e, key, right):  # type: ignore[no-untyped-def]
    """``e`` sorts before the insertion point of ``key`` (numpy's side comparators)."""
    return (not _lt(key, e)) if right else _lt(e, key)


@numba.njit(cache=True)
def _is_sorted(a):  # type: ignore[no-untyped-def]
    """No element sorts before the one preceding it (``_lt``). Checked a block at a time with
    no exit inside a block, over two views of the block (the element and its predecessor): the
    compiler vectorises that, 0.15 ns per element instead of 0.9 with an exit per element, and
    the labelling checks the times of every transfer."""
    n = a.size
    for start in range(1, n, 512):
        stop = min(start + 512, n)
        prev, this = a[start - 1 : stop - 1], a[start:stop]
        bad = False
        for i in range(this.size):
            x, y = this[i], prev[i]
            bad |= (x < y) | ((y != y) & (x == x))  # _lt(x, y), without branches
        if bad:
            return False
    return True


@numba.njit(cache=True)
def _ascending(a):  # type: ignore[no-untyped-def]
    """``a[i - 1] <= a[i]`` everywhere (so no NaN): what ``interp``'s walk needs of ``xp``
    (blocks as in ``_is_sorted``)."""
    n = a.size
    for start in range(1, n, 512):
        stop = min(start + 512, n)
        prev, this = a[start - 1 : stop - 1], a[start:stop]
        ok = True
        for i in range(this.size):
            ok &= prev[i] <= this[i]
        if not ok:
            return False
    return True


@numba.njit(cache=True)
def _gallop(arr, key, right, h):  # type: ignore[no-untyped-def]
    """Insertion point of ``key`` in the sorted ``arr``, searched outwards from ``h``: O(1)
    when consecutive keys land close together, as the segment-by-segment questions do."""
    n = arr.size
    h = min(max(h, 0), n)
    if h < n and _before(arr[h], key, right):
        lo = h + 1
        step = 1
        hi = lo
        while hi < n and _before(arr[hi], key, right):
            lo = hi + 1
            step *= 2
            hi = lo + step - 1
        hi = min(hi, n)
    else:
        hi = h
        step = 1
        lo = h - 1
        while lo >= 0 and not _before(arr[lo], key, right):
            hi = lo
            step *= 2
            lo = hi - step
        lo = max(lo, -1) + 1
    while lo < hi:
        mid = (lo + hi) >> 1
        if _before(arr[mid], key, right):
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True)
def searchsorted(arr, keys, right):  # type: ignore[no-untyped-def]
    """``np.searchsorted(arr, keys, side="right" if right else "left")``, exactly.

    On a sorted ``arr`` the answer is unique and a gallop finds it; on an unsorted one (a
    capture whose clock stepped back) numpy's own binary search is replayed, hint included,
    so the answer is still numpy's.
    """
    n = arr.size
    out = np.empty(keys.size, np.int64)
    if keys.size == 0:
        return out
    if _is_sorted(arr):
        h = 0
        for i in range(keys.size):
            h = _gallop(arr, keys[i], right, h)
            out[i] = h
        return out
    lo, hi, last = 0, n, keys[0]  # npysort/binsearch.cpp, binsearch<side>
    for i in range(keys.size):
        key = keys[i]
        if _before(last, key, right):
            hi = n
        else:
            lo = 0
            hi = hi + 1 if hi < n else n
        last = key
        while lo < hi:
            mid = lo + ((hi - lo) >> 1)
            if _before(arr[mid], key, right):
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo
    return out


@numba.njit(cache=True)
def search_ascending(arr, arr_sorted, keys, right):  # type: ignore[no-untyped-def]
    """``searchsorted(arr, keys, right)``, exactly, for ``keys`` the caller knows are ascending
    (a running maximum): on a sorted ``arr`` (``arr_sorted``: the caller knows, e.g. a running
    maximum itself) the answers only move forward, and one walk over ``arr`` finds them all;
    otherwise ``searchsorted``."""
    if not arr_sorted:
        return searchsorted(arr, keys, right)
    out = np.empty(keys.size, np.int64)
    n = arr.size
    p = 0
    for i in range(keys.size):
        while p < n and _before(arr[p], keys[i], right):
            p += 1
        out[i] = p
    return out


@numba.njit(cache=True)
def search_shifted(arr, arr_sorted, x, x_sorted, a, b, right, offset):  # type: ignore[no-untyped-def]
    """``searchsorted(arr, (x + a) + b, right) + offset``, exactly, without the keys' array.

    The labelling asks each question of every interval with keys that are its segments' times
    shifted by a constant (``t1 - lag - jitter`` is ``(t1 + -lag) + -jitter``, bit for bit).
    When ``arr`` and ``x`` are sorted (the caller checked each once: ``_is_sorted``) the keys
    are too (adding a constant never reverses two floats), so the answers only move forward:
    one walk over ``arr`` answers them all, a comparison per step where ``searchsorted``
    gallops from each previous answer. Otherwise the keys are made and searched as before.
    """
    out = np.empty(x.size, np.int64)
    if not (arr_sorted and x_sorted):
        pos = searchsorted(arr, (x + a) + b, right)
        for i in range(x.size):
            out[i] = pos[i] + offset
        return out
    n = arr.size
    p = 0
    for i in range(x.size):
        key = (x[i] + a) + b
        while p < n and _before(arr[p], key, right):
            p += 1
        out[i] = p + offset
    return out


@numba.njit(cache=True)
def searched_unsorted(arr, arr_sorted, x, x_sorted, a, b, right):  # type: ignore[no-untyped-def]
    """``search_shifted(arr, arr_sorted, x, x_sorted, a, b, right, 0)`` where ``arr`` is not
    sorted, for ``search_one``; nothing where it is. (numpy's binary search, replayed on an
    unsorted array, depends on every earlier key: its answers are all made.)"""
    if arr_sorted:
        return np.empty(0, np.int64)
    return search_shifted(arr, arr_sorted, x, x_sorted, a, b, right, 0)


@numba.njit(cache=True, inline="always")
def search_one(arr, unsorted, x, i, a, b, right, hint):  # type: ignore[no-untyped-def]
    """Answer i of ``search_shifted(arr, .., x, .., a, b, right, 0)`` alone, for a question the
    labelling asks of few intervals: from ``unsorted`` (``searched_unsorted``: ``arr`` is not
    sorted) or, on a sorted ``arr``, where the answer is unique, by a gallop from ``hint`` (any
    earlier answer)."""
    if unsorted.size:
        return unsorted[i]
    return _gallop(arr, (x[i] + a) + b, right, hint)


LIKELY_IN_CACHE_SIZE = 8  # numpy's compiled_base.c


@numba.njit(cache=True)
def _search_with_guess(key, arr, guess):  # type: ignore[no-untyped-def]
    """numpy's ``binary_search_with_guess`` (compiled_base.c): the last i with arr[i] <= key,
    -1 below arr[0], len above arr[-1]; the neighbours of ``guess`` are tried first. Ported
    step by step so that even an unsorted ``arr`` gives numpy's answer."""
    n = arr.size
    imin, imax = 0, n
    if key > arr[n - 1]:
        return n
    if key < arr[0]:
        return -1
    if n <= 4:
        i = 1
        while i < n and key >= arr[i]:
            i += 1
        return i - 1
    guess = max(min(guess, n - 3), 1)
    if key < arr[guess]:
        if key < arr[guess - 1]:
            imax = guess - 1
            if guess > LIKELY_IN_CACHE_SIZE and key >= arr[guess - LIKELY_IN_CACHE_SIZE]:
                imin = guess - LIKELY_IN_CACHE_SIZE
        else:
            return guess - 1
    elif key < arr[guess + 1]:
        return guess
    elif key < arr[guess + 2]:
        return guess + 1
    else:
        imin = guess + 2
        if guess < n - LIKELY_IN_CACHE_SIZE - 1 and key < arr[guess + LIKELY_IN_CACHE_SIZE]:
            imax = guess + LIKELY_IN_CACHE_SIZE
    while imin < imax:
        imid = imin + ((imax - imin) >> 1)
        if key >= arr[imid]:
            imin = imid + 1
        else:
            imax = imid
    return imin - 1


@numba.njit(cache=True)
def interp(x, xp, fp, walk):  # type: ignore[no-untyped-def]
    """``np.interp(x, xp, fp)``: numpy's loop (compiled_base.c ``arr_interp``) step by step —
    the search with the previous answer as guess, the slope, the retry from the right end when
    a slope gives NaN.

    When ``x`` is sorted and ``xp`` ascending without NaN (``walk``: the caller knows, from
    ``_is_sorted`` and ``_ascending``), the search's answer is unique (the last j with
    xp[j] <= x[i]; -1 below xp[0], len above the last) and ascends with x[i]: one forward walk
    over ``xp`` finds them all."""
    out = np.empty(x.size)
    m = xp.size
    lval, rval = fp[0], fp[m - 1]
    j = 0
    p = 0  # (the walk) how many of xp are <= the current x
    # numpy's slopes, made up front as numpy makes them when there are no more points than
    # queries: the same divisions, one pass the compiler vectorises instead of one per query
    slopes = np.empty(max(m - 1, 0) if m <= x.size else 0)
    for s in range(slopes.size):
        run = xp[s + 1] - xp[s]  # (0 between equal points: never asked, NaN marks it)
        slopes[s] = (fp[s + 1] - fp[s]) / run if run != 0 else np.nan
    for i in range(x.size):
        v = x[i]
        if m == 1:  # numpy's own branch for one point (no NaN test there)
            out[i] = lval if v < xp[0] else (rval if v > xp[0] else fp[0])
            continue
        if v != v:
            out[i] = v
            continue
        if walk:
            while p < m and xp[p] <= v:
                p += 1
            j = m if v > xp[m - 1] else p - 1
        else:
            j = _search_with_guess(v, xp, j)
        if j == -1:
            out[i] = lval
        elif j == m:
            out[i] = rval
        elif j == m - 1 or xp[j] == v:
            out[i] = fp[j]
        else:
            slope = slopes[j] if slopes.size else np.nan
            if slope != slope:  # (not made up front, or NaN: numpy's own division again)
                slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
            r = slope * (v - xp[j]) + fp[j]
            if r != r:
                r = slope * (v - xp[j + 1]) + fp[j + 1]
                if r != r and fp[j] == fp[j + 1]:
                    r = fp[j]
            out[i] = r
    return out
