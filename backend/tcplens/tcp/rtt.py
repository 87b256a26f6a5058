"""Round-trip time samples: data → ACK (Karn, SACK-aware), timestamps, handshake halves.

* **data → ACK**: chosen by the per-packet state machine (:mod:`tcplens.tcp.events`): an ACK
  that advances the cumulative acknowledgment times the newest data segment it covers. Karn's
  rule (RFC 6298 §3): no sample when the newly acknowledged range contains any segment sent
  more than once, since the ACK may answer either copy, and a hole filled by a retransmission
  would otherwise inflate the sample by the whole recovery. Like Linux (``tcp_sacktag_one``),
  a SACK block that newly covers a never-retransmitted segment is a sample too, so RTT keeps
  being measured during loss recovery while the cumulative ACK stalls.
* **timestamps** (RFC 7323 §4): the first reverse packet echoing a TSval, timed from the first
  packet that carried it.
* **handshake**: SYN → SYN/ACK and SYN/ACK → ACK separately, because their split tells where
  the capture was taken (:mod:`tcplens.tcp.vantage`).

All of it is two compiled passes per flow, flows in parallel: the first finds the timestamp
samples, counts the flow's samples and takes its path-RTT statistics (:func:`_path_rtt`); the
second merges the flow's samples in the order of the completing packet straight into their
final rows, so the result is sorted by ``(flow, frame)`` without a sort and without n-sized
temporaries (fresh memory is the analysis's main per-packet cost, issue 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.compiled import empty, inline_kernel, kernel, parallel_kernel
from tcplens.tcp.model import (
    RTT_DATA_ACK,
    RTT_HANDSHAKE_SYN,
    RTT_HANDSHAKE_SYNACK,
    RTT_TIMESTAMP,
    RttSamples,
    Segments,
)
from tcplens.tcp.segments import FlowFacts, Handshake

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

RTT_CLIP_NS = (1 << 40) - 1  # about 18 minutes: longer samples count as this in the statistics


@dataclass(frozen=True)
class PathRtt:
    """Per flow path round-trip time (see :func:`path_rtt`), -1 without any sample."""

    min_ns: I64
    median_ns: I64
    p95_ns: I64  # nearest rank
    data_ack_min_ns: I64  # (F, 2): smallest data → ACK sample timing direction d's data, -1


def rtt_samples(
    packets: PacketTable,
    seg: Segments,
    hs: Handshake,
    facts: FlowFacts,
    halves: tuple[I64, I64],
    work: I32,
) -> tuple[RttSamples, PathRtt]:
    """All RTT samples of all flows, sorted by flow, then by the completing packet's frame,
    and each flow's path RTT.

    The timestamps options are read from ``packets`` (the table ``seg`` was built from);
    ``facts`` holds the data → ACK pairs the per-packet state machine chose; ``halves`` are
    the handshake's SYN → SYN/ACK and SYN/ACK → ACK times per flow (-1 unknown); ``work`` is
    an int32 array of ``len(seg)`` values this pass may overwrite.
    """
    n_flows = hs.syn.shape[0]
    stats = np.empty((n_flows, 5), np.int64)
    n_timestamp = np.empty((n_flows, 2), np.int64)
    # the timestamp samples' rows: the TSvals' in ``work``, the echoes' here
    echo_work = empty(len(seg), np.int32, dense=True)
    # two passes over each flow's samples: the first counts them (and takes the path RTT), so
    # that the second writes them straight to their final rows: no n-sized temporaries
    count = _count(
        facts.chunks,
        seg.offsets,
        seg.time_ns,
        seg.frame,
        packets.has_ts,
        packets.ts_val,
        packets.ts_ecr,
        facts.rtt_ack,
        facts.rtt_sent,
        2 * seg.offsets[0:-1:2],
        facts.rtt_count,
        hs.syn,
        hs.synack,
        hs.ack,
        halves[0],
        halves[1],
        work,
        echo_work,
        n_timestamp,
        stats,
    )
    out = np.zeros(n_flows + 1, np.int64)
    np.cumsum(count, out=out[1:])
    k = int(out[-1])
    rtt = RttSamples(
        offsets=out,
        direction=empty(k, np.uint8, dense=True),
        kind=empty(k, np.uint8, dense=True),
        time_ns=empty(k, np.int64, dense=True),
        rtt_ns=empty(k, np.int64, dense=True),
        frame=empty(k, np.uint32, dense=True),
        sent_frame=empty(k, np.uint32, dense=True),
    )
    _write(
        facts.chunks,
        seg.offsets,
        seg.time_ns,
        seg.frame,
        facts.rtt_ack,
        facts.rtt_sent,
        2 * seg.offsets[0:-1:2],
        facts.rtt_count,
        hs.syn,
        hs.synack,
        hs.ack,
        work,
        echo_work,
        n_timestamp,
        out,
        (rtt.direction, rtt.kind, rtt.time_ns, rtt.rtt_ns, rtt.frame, rtt.sent_frame),
    )
    path = PathRtt(
        min_ns=stats[:, 0].copy(),
        median_ns=stats[:, 1].copy(),
        p95_ns=stats[:, 2].copy(),
        data_ack_min_ns=stats[:, 3:5].copy(),
    )
    return rtt, path


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
def _timestamp_pairs(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    s_lo, s_hi, e_lo, e_hi, frame, time_ns, has_ts, ts_val, ts_ecr, sent_out, echo_out
):
    """RFC 7323 samples of one direction pair: the first packet of direction e echoing a TSval
    (TSecr) and the first packet of direction s that carried it.

    ``has_ts``, ``ts_val``, ``ts_ecr`` are the PacketTable's columns: Segments row r is its row
    ``frame[r] - 1``. Returns how many, and how many of them are kept (the echo not earlier
    than the TSval: a capture's clock can step back); echo rows go to ``echo_out[e_lo:]`` in
    row order, sent rows to ``sent_out[s_lo:]``.
    """
    ns = 0
    ne = 0
    mono = True
    last = np.uint32(0)
    for r in range(np.uint64(s_lo), np.uint64(s_hi)):  # first row of each TSval of the sender
        pk = np.uint64(frame[r]) - np.uint64(1)  # PacketTable row (unsigned: no wraparound)
        if has_ts[pk]:
            v = ts_val[pk]
            if ns > 0 and v < last:
                mono = False
                break
            if ns == 0 or v != last:
                sent_out[s_lo + ns] = r
                ns += 1
                last = v
    if mono:
        for r in range(np.uint64(e_lo), np.uint64(e_hi)):  # first row of each echoed value
            pk = np.uint64(frame[r]) - np.uint64(1)  # (0: nothing echoed)
            if has_ts[pk] and ts_ecr[pk] != 0:
                v = ts_ecr[pk]
                if ne > 0 and v < last:
                    mono = False
                    break
                if ne == 0 or v != last:
                    echo_out[e_lo + ne] = r
                    ne += 1
                    last = v
    if mono:  # merge-join of two ascending lists, in place (matches never overtake the reads)
        p = 0
        q = 0
        m = 0
        kept = 0
        while p < ne and q < ns:
            e = np.uint64(echo_out[e_lo + p])
            s = np.uint64(sent_out[s_lo + q])
            ev = ts_ecr[np.uint64(frame[e]) - np.uint64(1)]
            sv = ts_val[np.uint64(frame[s]) - np.uint64(1)]
            if sv < ev:
                q += 1
            elif sv > ev:
                p += 1
            else:
                echo_out[e_lo + m] = e
                sent_out[s_lo + m] = s
                kept += time_ns[e] >= time_ns[s]
                m += 1
                p += 1
                q += 1
        return m, kept
    # values went backwards somewhere (a clock reset, a middlebox): sort them
    p_s = frame[s_lo:s_hi].astype(np.int64) - 1
    p_e = frame[e_lo:e_hi].astype(np.int64) - 1
    sending = has_ts[p_s]
    echoing = has_ts[p_e] & (ts_ecr[p_e] != 0)
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


@inline_kernel
def _handshake_samples(f, syn, synack, hs_ack, h_ack, h_sent, h_kind):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The flow's handshake samples in completion order, at most two: (acknowledging row, timed
    row, kind) to ``h_ack[p], h_sent[p], h_kind[p]`` (the caller's, reused for every flow: an
    allocation per flow cost ~10 ns/packet on 100k short flows). Returns how many."""
    nh = 0
    if syn[f] >= 0 and synack[f] >= 0:
        h_ack[nh] = synack[f]
        h_sent[nh] = syn[f]
        h_kind[nh] = RTT_HANDSHAKE_SYN
        nh += 1
    if synack[f] >= 0 and hs_ack[f] >= 0:
        h_ack[nh] = hs_ack[f]
        h_sent[nh] = synack[f]
        h_kind[nh] = RTT_HANDSHAKE_SYNACK
        nh += 1
    return nh


@parallel_kernel
def _count(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    chunks,
    offsets,
    time_ns,
    frame,
    has_ts,
    ts_val,
    ts_ecr,
    data_ack,
    data_sent,
    data_region,
    n_data,
    syn,
    synack,
    hs_ack,
    syn_rtt,
    synack_rtt,
    sent_work,
    echo_work,
    n_timestamp,
    stats,
):
    """Per flow: the timestamp samples (rows in ``sent_work``/``echo_work``, how many in
    ``n_timestamp``), the number of samples kept (negative ones dropped: a capture's clock can
    step back) and the path RTT (:func:`path_rtt`)."""
    count = np.zeros(syn.shape[0], np.int64)
    for c in numba.prange(chunks.shape[0] - 1):
        h_ack = np.empty(2, np.int64)  # per chunk: see _handshake_samples
        h_sent = np.empty(2, np.int64)
        h_kind = np.empty(2, np.uint8)
        # the flow's data -> ACK samples (the largest flow's so far, reused)
        values = np.empty(0, np.int64)
        for f in range(chunks[c], chunks[c + 1]):
            lo0 = offsets[2 * f]
            lo1 = offsets[2 * f + 1]
            hi1 = offsets[2 * f + 2]
            # echoes by direction 0 of direction 1's TSvals, and the reverse
            m0, kept0 = _timestamp_pairs(
                lo1, hi1, lo0, lo1, frame, time_ns, has_ts, ts_val, ts_ecr, sent_work, echo_work
            )
            m1, kept1 = _timestamp_pairs(
                lo0, lo1, lo1, hi1, frame, time_ns, has_ts, ts_val, ts_ecr, sent_work, echo_work
            )
            n_timestamp[f, 0] = m0
            n_timestamp[f, 1] = m1
            kept = kept0 + kept1
            nh = _handshake_samples(f, syn, synack, hs_ack, h_ack, h_sent, h_kind)
            for p in range(nh):
                if time_ns[h_ack[p]] >= time_ns[h_sent[p]]:
                    kept += 1
            # data -> ACK samples: direction 0's from the front of ``values``, 1's from the back
            nd = n_data[f]
            db = data_region[f]
            if nd > values.shape[0]:
                values = np.empty(max(nd, 2 * values.shape[0]), np.int64)
            c0 = 0
            c1 = 0
            min0 = np.int64(-1)
            min1 = np.int64(-1)
            for p in range(nd):
                s = data_sent[db + p]
                # unsigned indices: no negative-index wraparound
                rt = time_ns[np.uint64(data_ack[db + p])] - time_ns[np.uint64(s)]
                if rt < 0:
                    continue
                v = min(rt, RTT_CLIP_NS)
                if s < lo1:  # timing direction 0's data
                    values[c0] = v
                    c0 += 1
                    min0 = rt if min0 < 0 else min(min0, rt)
                else:
                    c1 += 1
                    values[nd - c1] = v
                    min1 = rt if min1 < 0 else min(min1, rt)
            count[f] = kept + c0 + c1
            stats[f, 3] = min0
            stats[f, 4] = min1
            _path_rtt(values, 0, nd, c0, c1, syn_rtt[f], synack_rtt[f], stats, f)
    return count


NONE = np.uint64(1 << 32)  # beyond every frame number (uint32)


@inline_kernel
def _next_pair(acks, a_base, sents, s_base, p, n, frame):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Sample ``p`` of a source (rows ``acks[a_base + p]``, ``sents[s_base + p]``) and its
    completing frame, or frame :data:`NONE` when the source has no more (unsigned indices)."""
    if p < n:
        a = np.uint64(acks[a_base + p])
        return a, np.uint64(sents[s_base + p]), np.uint64(frame[a])
    return np.uint64(0), np.uint64(0), NONE


@parallel_kernel
def _write(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    chunks,
    offsets,
    time_ns,
    frame,
    data_ack,
    data_sent,
    data_region,
    n_data,
    syn,
    synack,
    hs_ack,
    sent_work,
    echo_work,
    n_timestamp,
    out,
    columns,
):
    """Per flow: the merge of all samples by completing frame (data → ACK first, then
    timestamp, then handshake samples, as the kinds are numbered), negative samples dropped as
    :func:`_count` counted them, each written to its final row ``out[f] + j``."""
    sent_dir, kind_of, t_of, rtt_of, ack_frame, sent_frame = columns
    for c in numba.prange(chunks.shape[0] - 1):
        h_ack = np.empty(2, np.int64)  # per chunk: see _handshake_samples
        h_sent = np.empty(2, np.int64)
        h_kind = np.empty(2, np.uint8)
        for f in range(chunks[c], chunks[c + 1]):
            lo0 = offsets[2 * f]
            lo1 = offsets[2 * f + 1]
            m0 = n_timestamp[f, 0]
            m1 = n_timestamp[f, 1]
            nh = _handshake_samples(f, syn, synack, hs_ack, h_ack, h_sent, h_kind)
            nd = n_data[f]
            db = data_region[f]
            o = out[f]
            # the next sample of each source: data -> ACK, timestamps echoed by direction 0,
            # by direction 1, handshake (in that order on the same frame), as (acknowledging
            # row, timed row, its frame); a source that is done has frame NONE
            pd = 0
            p0 = 0
            p1 = 0
            ph = 0
            ad, sd, fd = _next_pair(data_ack, db, data_sent, db, pd, nd, frame)
            a0, s0, f0 = _next_pair(echo_work, lo0, sent_work, lo1, p0, m0, frame)
            a1, s1, f1 = _next_pair(echo_work, lo1, sent_work, lo0, p1, m1, frame)
            ah, sh, fh = _next_pair(h_ack, 0, h_sent, 0, ph, nh, frame)
            while True:
                # the earliest frame, ties to the earlier source: selects, not branches
                best = 0
                a, s, bf = ad, sd, fd
                if f0 < bf:
                    best, a, s, bf = 1, a0, s0, f0
                if f1 < bf:
                    best, a, s, bf = 2, a1, s1, f1
                if fh < bf:
                    best, a, s, bf = 3, ah, sh, fh
                if bf == NONE:
                    break
                if best == 0:
                    kind = RTT_DATA_ACK
                    pd += 1
                    ad, sd, fd = _next_pair(data_ack, db, data_sent, db, pd, nd, frame)
                elif best == 3:
                    kind = h_kind[ph]
                    ph += 1
                    ah, sh, fh = _next_pair(h_ack, 0, h_sent, 0, ph, nh, frame)
                else:
                    kind = RTT_TIMESTAMP
                    if best == 1:
                        p0 += 1
                        a0, s0, f0 = _next_pair(echo_work, lo0, sent_work, lo1, p0, m0, frame)
                    else:
                        p1 += 1
                        a1, s1, f1 = _next_pair(echo_work, lo1, sent_work, lo0, p1, m1, frame)
                rt = time_ns[a] - time_ns[s]
                if rt < 0:
                    continue
                u = np.uint64(o)  # unsigned: numba adds no negative-index wraparound per store
                sent_dir[u] = 0 if s < np.uint64(lo1) else 1
                kind_of[u] = kind
                t_of[u] = time_ns[a]
                rtt_of[u] = rt
                ack_frame[u] = bf
                sent_frame[u] = frame[s]
                o += 1


@inline_kernel
def _path_rtt(values, vb, nd, c0, c1, syn_rtt, synack_rtt, stats, f):  # type: ignore[no-untyped-def]  # pragma: no cover
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
        _select(values, lo, lo + c, mid)
        if p95 > mid:
            _select(values, mid + 1, lo + c, p95)
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
def _select(v, lo, hi, k):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
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
