"""RFC 7323 §4 round-trip time samples: the first packet of one direction echoing a TSval
(its TSecr), timed from the first packet of the other direction that carried that TSval.

The pairs are found right after the flow assignment, from the flow layout (the Segments order),
before the per-packet pass: the table's ``ts_val``/``ts_ecr`` columns (8 bytes a packet) are then
done with (``table.DONE_AFTER_FLOWS``) and their pages hold Segments' columns instead of fresh
ones (fresh memory is the analysis's main per-packet cost, issue 4), while the pairs kept for
:func:`tcplens.tcp.rtt.rtt_samples`, which merges them with the flow's other samples, take a
quarter of that on a bulk transfer (one pair per newly echoed TSval).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.compiled import WORKERS, in_turn
from tcplens.capture.table import OPTION_TIMESTAMPS, PacketTable
from tcplens.tcp.compiled import empty, inline_kernel, kernel, parallel_kernel
from tcplens.tcp.grouping import FlowLayout

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class TimestampEchoes:
    """Each flow's RFC 7323 pairs, as Segments rows: ``count[f, 0]`` echoes by direction 0 of
    direction 1's TSvals, then ``count[f, 1]`` by direction 1 of direction 0's, each in row order,
    from ``first[f]`` on in ``echo`` (the first packet echoing a TSval) and ``sent`` (the first
    packet that carried it)."""

    first: I64
    count: I64  # (n_flows, 2)
    echo: I32
    sent: I32


def timestamp_echoes(packets: PacketTable, layout: FlowLayout) -> TimestampEchoes:
    """The RFC 7323 pairs of every flow of ``layout`` (flows in parallel)."""
    n_flows = layout.n_flows
    first = np.empty(n_flows, np.int64)
    count = np.empty((n_flows, 2), np.int64)
    # each chunk of flows writes its pairs from its first Segments row on (a flow has at most as
    # many pairs as rows): only the pages that receive pairs are touched
    echo = empty(layout.rows.shape[0], np.int32)
    sent = empty(layout.rows.shape[0], np.int32)
    _echoes(
        layout.chunks,
        layout.offsets,
        layout.rows,
        packets.tcp_options,
        packets.ts_val,
        packets.ts_ecr,
        first,
        count,
        echo,
        sent,
    )
    return TimestampEchoes(first, count, echo, sent)


# _any_timestamps reads this many rows with no exit inside: the compiler vectorises the block
_SCAN_BLOCK = 1024


@kernel
def _any_timestamps(options):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Some row of ``options`` (the table's ``tcp_options``) has ``OPTION_TIMESTAMPS``: a block
    at a time, so a capture with timestamps answers at its first block and one without costs a
    vectorised read of one byte a row."""
    for lo in range(0, options.shape[0], _SCAN_BLOCK):
        block = options[lo : lo + _SCAN_BLOCK]  # (a view: its own bounds vectorise, 0.04 ns/row)
        seen = np.uint8(0)
        for i in range(block.shape[0]):
            seen |= block[i]
        if (seen & OPTION_TIMESTAMPS) != 0:
            return True
    return False


@parallel_kernel
def _echoes(chunks, offsets, rows, options, ts_val, ts_ecr, first, count, echo, sent):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    if not _any_timestamps(options):
        # no packet carries the option (short_100k): no pairs, and no pass that gathers every
        # packet's options through the layout (checked in here: a kernel of its own would cost
        # every run its load)
        first[:] = 0
        count[:] = 0
        return
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # on all cores (capture.compiled.WORKERS)
        for c in in_turn(taken, chunks.shape[0] - 1):
            o = offsets[2 * chunks[c]]  # the chunk's region
            for f in range(chunks[c], chunks[c + 1]):
                lo0 = offsets[2 * f]
                lo1 = offsets[2 * f + 1]
                hi1 = offsets[2 * f + 2]
                first[f] = o
                # echoes by direction 0 of direction 1's TSvals, and the reverse
                m0 = timestamp_pairs(
                    lo1, hi1, lo0, lo1, rows, options, ts_val, ts_ecr, sent, echo, o
                )
                o += m0
                m1 = timestamp_pairs(
                    lo0, lo1, lo1, hi1, rows, options, ts_val, ts_ecr, sent, echo, o
                )
                o += m1
                count[f, 0] = m0
                count[f, 1] = m1


@kernel
def _first_values_sorted(rows, values):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Distinct values ascending and the first row of each (any order of ``values``)."""
    order = np.argsort(values, kind="mergesort")  # stable: the first row of a value first
    first = np.empty(rows.shape[0], np.int64)
    m = 0
    for j in range(order.shape[0]):
        if m == 0 or values[order[j]] != values[first[m - 1]]:
            first[m] = order[j]
            m += 1
    return rows[first[:m]], values[first[:m]]


@inline_kernel
def timestamp_pairs(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    s_lo, s_hi, e_lo, e_hi, rows, options, ts_val, ts_ecr, sent_out, echo_out, o
):
    """RFC 7323 samples of one direction pair: the first packet of direction e (Segments rows
    ``e_lo:e_hi``) echoing a TSval (TSecr) and the first packet of direction s that carried it.

    ``options``, ``ts_val``, ``ts_ecr`` are the PacketTable's columns (``tcp_options``, ...):
    Segments row r is its row ``rows[r]`` (the flow layout's). Returns how many; echo rows go to
    ``echo_out[o:]`` in row order, the sent rows to ``sent_out[o:]``.
    """
    # One pass over the echoes; at each newly echoed value the sender's rows are read on to its
    # first one carrying a value not below it: when both sides' values ascend (the rule), that
    # row is the first to carry the echoed value, if any does. So the matches come out in row
    # order where both lists are read, with no lists of each side's distinct values to join
    # after (bulk_5M: rtt_samples' CPU 57 → 50 ms).
    m = 0
    mono = True
    at = np.uint64(s_lo)  # the sender's next row to read
    s_end = np.uint64(s_hi)
    c_ok = False  # c_row: the sender's first row with a value (c_val) >= the last echoed one
    c_row = np.uint64(0)
    c_val = np.uint32(0)
    ne = 0
    last = np.uint32(0)
    for r in range(np.uint64(e_lo), np.uint64(e_hi)):  # first row of each echoed value
        pk = np.uint64(rows[r])  # PacketTable row (unsigned: no negative-index wraparound)
        if (options[pk] & OPTION_TIMESTAMPS) != 0 and ts_ecr[pk] != 0:  # (0: nothing echoed)
            v = ts_ecr[pk]
            if ne > 0 and v < last:
                mono = False
                break
            if ne == 0 or v != last:
                ne += 1
                last = v
                while (not c_ok or c_val < v) and at < s_end:
                    pq = np.uint64(rows[at])
                    if (options[pq] & OPTION_TIMESTAMPS) != 0:
                        w = ts_val[pq]
                        if c_ok and w < c_val:
                            mono = False
                            break
                        c_ok = True
                        c_row = at
                        c_val = w
                    at += np.uint64(1)
                if not mono:
                    break
                if c_ok and c_val == v:
                    echo_out[o + m] = r
                    sent_out[o + m] = c_row
                    m += 1
    if mono:  # the rest of the sender's values must ascend too
        while at < s_end:
            pq = np.uint64(rows[at])
            if (options[pq] & OPTION_TIMESTAMPS) != 0:
                w = ts_val[pq]
                if c_ok and w < c_val:
                    mono = False
                    break
                c_ok = True
                c_val = w
            at += np.uint64(1)
    if mono:
        return m
    # values went backwards somewhere (a clock reset, a middlebox): sort them
    p_s = rows[s_lo:s_hi].astype(np.int64)
    p_e = rows[e_lo:e_hi].astype(np.int64)
    sending = (options[p_s] & OPTION_TIMESTAMPS) != 0
    echoing = ((options[p_e] & OPTION_TIMESTAMPS) != 0) & (ts_ecr[p_e] != 0)
    rows_s = np.arange(s_lo, s_hi)[sending]
    rows_e = np.arange(e_lo, e_hi)[echoing]
    s_rows, s_vals = _first_values_sorted(rows_s, ts_val[p_s[sending]])
    e_rows, e_vals = _first_values_sorted(rows_e, ts_ecr[p_e[echoing]])
    match_e = np.empty(e_rows.shape[0], np.int64)
    match_s = np.empty(e_rows.shape[0], np.int64)
    p = 0
    q = 0
    m = 0
    while p < e_rows.shape[0] and q < s_rows.shape[0]:
        if s_vals[q] < e_vals[p]:
            q += 1
        elif s_vals[q] > e_vals[p]:
            p += 1
        else:
            match_e[m] = e_rows[p]
            match_s[m] = s_rows[q]
            m += 1
            p += 1
            q += 1
    order = np.argsort(match_e[:m])
    for j in range(m):
        echo_out[o + j] = match_e[order[j]]
        sent_out[o + j] = match_s[order[j]]
    return m
