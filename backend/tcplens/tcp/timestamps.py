"""RFC 7323 §4 round-trip time samples: the first packet of one direction echoing a TSval
(its TSecr), timed from the first packet of the other direction that carried that TSval.

Part of :func:`tcplens.tcp.rtt.rtt_samples`' first pass; the rows found here are merged with the
flow's other samples by its second pass.
"""

from __future__ import annotations

import numpy as np

from tcplens.capture.table import OPTION_TIMESTAMPS
from tcplens.tcp.compiled import inline_kernel, kernel


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
    s_lo, s_hi, e_lo, e_hi, frame, time_ns, options, ts_val, ts_ecr, sent_out, echo_out
):
    """RFC 7323 samples of one direction pair: the first packet of direction e echoing a TSval
    (TSecr) and the first packet of direction s that carried it.

    ``options``, ``ts_val``, ``ts_ecr`` are the PacketTable's columns (``tcp_options``, ...):
    Segments row r is its row ``frame[r] - 1``. Returns how many, and how many of them are
    kept (the echo not earlier than the TSval: a capture's clock can step back); echo rows go to
    ``echo_out[e_lo:]`` in row order, sent rows to ``sent_out[s_lo:]``.
    """
    # One pass over the echoes; at each newly echoed value the sender's rows are read on to its
    # first one carrying a value not below it: when both sides' values ascend (the rule), that
    # row is the first to carry the echoed value, if any does. So the matches come out in row
    # order where both lists are read, with no lists of each side's distinct values to join
    # after (bulk_5M: rtt_samples' CPU 57 → 50 ms).
    m = 0
    kept = 0
    mono = True
    at = np.uint64(s_lo)  # the sender's next row to read
    s_end = np.uint64(s_hi)
    c_ok = False  # c_row: the sender's first row with a value (c_val) >= the last echoed one
    c_row = np.uint64(0)
    c_val = np.uint32(0)
    ne = 0
    last = np.uint32(0)
    for r in range(np.uint64(e_lo), np.uint64(e_hi)):  # first row of each echoed value
        pk = np.uint64(frame[r]) - np.uint64(1)  # PacketTable row (unsigned: no wraparound)
        if (options[pk] & OPTION_TIMESTAMPS) != 0 and ts_ecr[pk] != 0:  # (0: nothing echoed)
            v = ts_ecr[pk]
            if ne > 0 and v < last:
                mono = False
                break
            if ne == 0 or v != last:
                ne += 1
                last = v
                while (not c_ok or c_val < v) and at < s_end:
                    pq = np.uint64(frame[at]) - np.uint64(1)
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
                    echo_out[e_lo + m] = r
                    sent_out[s_lo + m] = c_row
                    kept += time_ns[r] >= time_ns[c_row]
                    m += 1
    if mono:  # the rest of the sender's values must ascend too
        while at < s_end:
            pq = np.uint64(frame[at]) - np.uint64(1)
            if (options[pq] & OPTION_TIMESTAMPS) != 0:
                w = ts_val[pq]
                if c_ok and w < c_val:
                    mono = False
                    break
                c_ok = True
                c_val = w
            at += np.uint64(1)
    if mono:
        return m, kept
    # values went backwards somewhere (a clock reset, a middlebox): sort them
    p_s = frame[s_lo:s_hi].astype(np.int64) - 1
    p_e = frame[e_lo:e_hi].astype(np.int64) - 1
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
    kept = 0
    for j in range(m):
        echo_out[e_lo + j] = match_e[order[j]]
        sent_out[s_lo + j] = match_s[order[j]]
        kept += time_ns[match_e[order[j]]] >= time_ns[match_s[order[j]]]
    return m, kept
