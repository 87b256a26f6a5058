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

A sample longer than the retransmission timeout its sender would have had is no round trip
(:func:`_rto_bound`): a sender resends data left unacknowledged that long (RFC 6298 §5), so an
ACK that first covers data later than that, with no resend between, answers nothing the
network did in that time: the ACK the receiver sent on time was not captured (captures that
hold no pure ACKs: nDPI's bitcoin, PcapPlusPlus's tls2, where the next request, a minute
later, is the first captured ACK), or the capture's clock jumped. Such samples are dropped,
and so is a handshake half (:attr:`Flows.handshake_syn_rtt_ns`) they rule out.

The timestamp pairs are found before the per-packet pass (:mod:`tcplens.tcp.timestamps`, so
that the table's timestamp columns die early); the rest is one compiled pass per flow, flows in
parallel, that merges the flow's samples in the order of the completing packet straight into
their final rows, so the result is sorted by ``(flow, frame)`` without a sort and without
n-sized temporaries (fresh memory is the analysis's main per-packet cost, issue 4), and takes
the flow's path-RTT statistics (:mod:`tcplens.tcp.path_rtt`). Each flow's number of samples is
known before (its pairs), unless samples are dropped (negative ones, where a capture's clock
stepped back, and those beyond the RTO).
"""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.compiled import WORKERS, in_turn
from tcplens.tcp.compiled import empty, inline_kernel, parallel_kernel
from tcplens.tcp.model import (
    RTT_DATA_ACK,
    RTT_HANDSHAKE_SYN,
    RTT_HANDSHAKE_SYNACK,
    RTT_TIMESTAMP,
    RttSamples,
    Segments,
)
from tcplens.tcp.path_rtt import RTT_CLIP_NS, PathRtt, path_rtt, scratch_size
from tcplens.tcp.segments import FlowFacts, Handshake
from tcplens.tcp.timestamps import TimestampEchoes

I64 = npt.NDArray[np.int64]

# Retransmission timeouts (RFC 6298 §2): the RTO is SRTT + 4 RTTVAR, at least 1 s (2.4), 1 s
# before any sample (2.1), and 3 s in stacks that still follow RFC 1122 / RFC 2988 (§5.7: also
# after a lost SYN): with no sample yet, the larger; at most Linux's TCP_RTO_MAX (RFC 6298 (2.5)
# allows a cap of 60 s or more).
MIN_RTO_NS = 1_000_000_000
INITIAL_RTO_NS = 3_000_000_000
MAX_RTO_NS = 120_000_000_000


def rtt_samples(
    seg: Segments,
    hs: Handshake,
    facts: FlowFacts,
    echoes: TimestampEchoes,
    halves: tuple[I64, I64],
    clock_steps: I64,
) -> tuple[RttSamples, PathRtt]:
    """All RTT samples of all flows, sorted by flow, then by the completing packet's frame,
    and each flow's path RTT.

    ``facts`` holds the data → ACK pairs the per-packet state machine chose, ``echoes`` the
    timestamp pairs (of the flow layout ``seg`` was built on); ``halves`` are the handshake's
    SYN → SYN/ACK and SYN/ACK → ACK times per flow (-1 unknown); a half whose sample is
    dropped (:func:`_rto_bound`, or across a clock step) is set to -1 in them.
    ``clock_steps`` are the frames (ascending) where the capture's clock jumps
    (``capture.clock``): a sample whose timed packet comes before one of them and whose
    completing packet at or after it is no round trip, and is dropped as a negative one is.
    """
    n_flows = hs.syn.shape[0]
    stats = np.empty((n_flows, 7), np.int64)
    # each flow's samples are its pairs, fewer only where samples are dropped (negative ones
    # and those beyond the RTO: _merge): each flow writes its samples from where they would start if
    # none were dropped, and only flows after a drop move down afterwards (no count first)
    pairs = facts.rtt_count + echoes.count[:, 0] + echoes.count[:, 1]
    pairs += (hs.syn >= 0) & (hs.synack >= 0)
    pairs += (hs.synack >= 0) & (hs.ack >= 0)
    room = _offsets(pairs)
    k = int(room[-1])
    columns = (
        empty(k, np.uint8, dense=True),
        empty(k, np.uint8, dense=True),
        empty(k, np.int64, dense=True),
        empty(k, np.int32, dense=True),
        empty(k, np.int32, dense=True),
    )
    kept = _merge(
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
        halves[0],
        halves[1],
        echoes.first,
        echoes.count,
        echoes.echo,
        echoes.sent,
        clock_steps,
        room,
        columns,
        stats,
    )
    out = room
    if not np.array_equal(kept, pairs):  # each flow's samples down to where they belong
        out = _offsets(kept)
        k = int(out[-1])
        source = np.arange(k) + np.repeat(room[:-1] - out[:-1], kept)
        for column in columns:
            column[:k] = column[source]
    k = int(out[-1])
    direction, kind, rtt_ns, row, sent_row = (c[:k] for c in columns)
    rtt = RttSamples(
        offsets=out,
        direction=direction,
        kind=kind,
        rtt_ns=rtt_ns,
        row=row,
        sent_row=sent_row,
        segment_time_ns=seg.time_ns,
        segment_frame=seg.frame,
    )
    path = PathRtt(
        min_ns=stats[:, 0].copy(),
        median_ns=stats[:, 1].copy(),
        p95_ns=stats[:, 2].copy(),
        data_ack_min_ns=stats[:, 3:5].copy(),
        data_ack_median_ns=stats[:, 5:7].copy(),
    )
    return rtt, path


def _offsets(counts: I64) -> I64:
    out = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out


@inline_kernel
def _rto_bound(srtt0, var0, srtt1, var1):  # type: ignore[no-untyped-def]  # pragma: no cover
    """The longest a sample may be: the retransmission timeout of a sender whose round trip is
    the flow's (RFC 6298 (2.2)-(2.5), with :data:`MIN_RTO_NS` ... :data:`MAX_RTO_NS`).

    ``srtt0, var0`` estimate (RFC 6298 (2.2)/(2.3)) the round trip from the capture point to
    the receiver of direction 0's data and back, from its data → ACK samples; ``srtt1, var1``
    the same for direction 1's (-1 and 0 before any). Their sum is the whole path, wherever
    the capture sat: each sender's round trip. Without any sample, :data:`INITIAL_RTO_NS`."""
    if srtt0 < 0 and srtt1 < 0:
        return INITIAL_RTO_NS
    rto = max(srtt0, 0) + max(srtt1, 0) + 4 * (var0 + var1)
    return min(max(rto, MIN_RTO_NS), MAX_RTO_NS)


@inline_kernel
def _estimate(srtt, var, r):  # type: ignore[no-untyped-def]  # pragma: no cover
    """RFC 6298 (2.2)/(2.3): SRTT and RTTVAR after sample ``r`` (alpha 1/8, beta 1/4);
    ``srtt`` -1 before the first."""
    if srtt < 0:
        return r, r // 2
    return srtt + (r - srtt) // 8, var + (abs(srtt - r) - var) // 4


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


NONE = np.uint64(1 << 32)  # beyond every frame number (uint32)


@inline_kernel
def spans_clock_step(steps, first, last):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Whether a frame of ``steps`` (ascending: where the clock jumps) is after frame ``first``
    and at most ``last``: the time from ``first`` to ``last`` crosses the jump."""
    k = np.searchsorted(steps, first, side="right")
    return k < steps.shape[0] and steps[k] <= last


@inline_kernel
def _next_pair(acks, a_base, sents, s_base, p, n, frame):  # type: ignore[no-untyped-def]  # pragma: no cover
    """Sample ``p`` of a source (rows ``acks[a_base + p]``, ``sents[s_base + p]``) and its
    completing frame, or frame :data:`NONE` when the source has no more (unsigned indices)."""
    if p < n:
        a = np.uint64(acks[a_base + p])
        return a, np.uint64(sents[s_base + p]), np.uint64(frame[a])
    return np.uint64(0), np.uint64(0), NONE


@parallel_kernel
def _merge(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
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
    syn_rtt,
    synack_rtt,
    ts_first,
    ts_count,
    ts_echo,
    ts_sent,
    clock_steps,
    room,
    columns,
    stats,
):
    """Per flow: the merge of all samples by completing frame (data → ACK first, then
    timestamp, then handshake samples, as the kinds are numbered), negative samples and those
    beyond the RTO (:func:`_rto_bound`, estimated from the data → ACK samples kept before)
    dropped, written from row ``room[f]`` on; the path RTT (:func:`path_rtt`). A handshake
    half whose sample is dropped is set to -1 in ``syn_rtt`` / ``synack_rtt``. Returns each
    flow's number of samples kept."""
    sent_dir, kind_of, rtt_of, ack_row, sent_row = columns
    kept = np.empty(syn.shape[0], np.int64)
    taken = np.zeros(1, np.int64)  # parts taken so far: each worker takes the next (in_turn)
    for _worker in numba.prange(WORKERS):  # on all cores (capture.compiled.WORKERS)
        for c in in_turn(taken, chunks.shape[0] - 1):
            h_ack = np.empty(2, np.int64)  # per chunk: see _handshake_samples
            h_sent = np.empty(2, np.int64)
            h_kind = np.empty(2, np.uint8)
            # the flow's data -> ACK samples (the largest flow's so far, reused)
            values = np.empty(0, np.int64)
            scratch = np.empty(0, np.int64)  # path_rtt's (the largest flow's so far, reused)
            for f in range(chunks[c], chunks[c + 1]):
                lo1 = np.uint64(offsets[2 * f + 1])
                t0 = ts_first[f]
                m0 = ts_count[f, 0]
                m1 = ts_count[f, 1]
                nh = _handshake_samples(f, syn, synack, hs_ack, h_ack, h_sent, h_kind)
                nd = n_data[f]
                db = data_region[f]
                if nd > values.shape[0]:
                    values = np.empty(max(nd, 2 * values.shape[0]), np.int64)
                    scratch = np.empty(scratch_size(values.shape[0]), np.int64)
                # data -> ACK sample values: direction 0's from the front of ``values``, 1's from
                # the back, and each direction's smallest
                c0 = 0
                c1 = 0
                min0 = np.int64(-1)
                min1 = np.int64(-1)
                # RFC 6298 estimates of each direction's data → ACK round trip (_rto_bound)
                srtt0 = np.int64(-1)
                var0 = np.int64(0)
                srtt1 = np.int64(-1)
                var1 = np.int64(0)
                o = room[f]
                # the next sample of each source: data -> ACK, timestamps echoed by direction 0,
                # by direction 1, handshake (in that order on the same frame), as (acknowledging
                # row, timed row, its frame); a source that is done has frame NONE
                pd = 0
                p0 = 0
                p1 = 0
                ph = 0
                ad, sd, fd = _next_pair(data_ack, db, data_sent, db, pd, nd, frame)
                a0, s0, f0 = _next_pair(ts_echo, t0, ts_sent, t0, p0, m0, frame)
                a1, s1, f1 = _next_pair(ts_echo, t0 + m0, ts_sent, t0 + m0, p1, m1, frame)
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
                    rt = time_ns[a] - time_ns[s]
                    ok = rt >= 0 and rt <= _rto_bound(srtt0, var0, srtt1, var1)
                    if clock_steps.shape[0] and spans_clock_step(clock_steps, frame[s], bf):
                        ok = False  # across a clock step: no round trip
                    if best == 0:
                        kind = RTT_DATA_ACK
                        pd += 1
                        ad, sd, fd = _next_pair(data_ack, db, data_sent, db, pd, nd, frame)
                        if ok:
                            v = min(rt, RTT_CLIP_NS)
                            if s < lo1:  # timing direction 0's data
                                values[c0] = v
                                c0 += 1
                                min0 = rt if min0 < 0 else min(min0, rt)
                                srtt0, var0 = _estimate(srtt0, var0, rt)
                            else:
                                c1 += 1
                                values[nd - c1] = v
                                min1 = rt if min1 < 0 else min(min1, rt)
                                srtt1, var1 = _estimate(srtt1, var1, rt)
                    elif best == 3:
                        kind = h_kind[ph]
                        if not ok:  # the half is no round trip
                            if kind == RTT_HANDSHAKE_SYN:
                                syn_rtt[f] = -1
                            else:
                                synack_rtt[f] = -1
                        ph += 1
                        ah, sh, fh = _next_pair(h_ack, 0, h_sent, 0, ph, nh, frame)
                    else:
                        kind = RTT_TIMESTAMP
                        if best == 1:
                            p0 += 1
                            a0, s0, f0 = _next_pair(ts_echo, t0, ts_sent, t0, p0, m0, frame)
                        else:
                            p1 += 1
                            a1, s1, f1 = _next_pair(
                                ts_echo, t0 + m0, ts_sent, t0 + m0, p1, m1, frame
                            )
                    if not ok:
                        continue
                    u = np.uint64(o)  # unsigned: numba adds no negative-index wraparound per store
                    sent_dir[u] = 0 if s < lo1 else 1
                    kind_of[u] = kind
                    rtt_of[u] = rt
                    ack_row[u] = np.int32(a)  # (the frame and time are read through it)
                    sent_row[u] = np.int32(s)
                    o += 1
                kept[f] = o - room[f]
                stats[f, 3] = min0
                stats[f, 4] = min1
                path_rtt(values, 0, nd, c0, c1, syn_rtt[f], synack_rtt[f], stats, f, scratch)
    return kept
