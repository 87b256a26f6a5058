"""Round-trip time samples: data → ACK (Karn, SACK-aware), timestamps, handshake halves.

* **data → ACK**: an ACK that advances the cumulative acknowledgment times the newest data
  segment it covers. Karn's rule (RFC 6298 §3): no sample when the newly acknowledged range
  contains any retransmitted segment, since the ACK may answer either copy, and a hole filled by
  a retransmission would otherwise inflate the sample by the whole recovery. Like Linux
  (``tcp_sacktag_one``), a SACK block that newly covers a never-retransmitted segment is a
  sample too, so RTT keeps being measured during loss recovery when the cumulative ACK stalls.
* **timestamps** (RFC 7323 §4): the first reverse packet echoing a TSval, timed from the first
  packet that carried it.
* **handshake**: SYN → SYN/ACK and SYN/ACK → ACK separately, because their split tells where
  the capture was taken (:mod:`tcplens.tcp.vantage`).

All of it is vectorised across flows: rows carry a global key ``2 * flow + direction`` in the
high bits of an ``int64`` and the relative sequence number in the low bits, so one
``searchsorted`` serves every flow at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.tcp.grouping import run_starts
from tcplens.tcp.model import (
    OUT_OF_ORDER,
    RETRANSMISSION,
    RTT_DATA_ACK,
    RTT_HANDSHAKE_SYN,
    RTT_HANDSHAKE_SYNACK,
    RTT_TIMESTAMP,
    RttSamples,
    Segments,
)
from tcplens.tcp.segments import Handshake

I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

_SEQ_BITS = 41  # relative sequence numbers up to 2**40 (1 TiB per direction)
_SEQ_BIAS = 1 << 40


def _global(key: I64, value: I64) -> I64:
    """One sortable int64 per (flow direction, sequence number)."""
    g: I64 = (key << _SEQ_BITS) + (value + _SEQ_BIAS)
    return g


def rtt_samples(seg: Segments, hs: Handshake, n_flows: int, flow_order: I64) -> RttSamples:
    """All RTT samples of all flows, sorted by flow, then by the completing packet's frame.

    ``flow_order`` lists segment rows in ``(flow, frame)`` order.
    """
    parts = [_data_ack(seg), _timestamps(seg), _handshake(seg, hs)]
    direction = np.concatenate([p[1] for p in parts]).astype(np.uint8)
    kind = np.concatenate([p[2] for p in parts]).astype(np.uint8)
    ack_row = np.concatenate([p[3] for p in parts])
    sent_row = np.concatenate([p[4] for p in parts])
    rank = np.empty(len(seg), dtype=np.int64)
    rank[flow_order] = np.arange(len(seg), dtype=np.int64)
    order = np.argsort(rank[ack_row], kind="stable")
    ack_row, sent_row = ack_row[order], sent_row[order]
    time_ns = seg.time_ns[ack_row]
    return RttSamples(
        flow=seg.flow[ack_row],
        direction=direction[order],
        kind=kind[order],
        time_ns=time_ns,
        rtt_ns=time_ns - seg.time_ns[sent_row],
        frame=seg.frame[ack_row],
        sent_frame=seg.frame[sent_row],
    )


_Part = tuple[I64, I64, I64, I64, I64]


def _empty() -> _Part:
    z = np.zeros(0, dtype=np.int64)
    return z, z, z, z, z


def _data_ack(seg: Segments) -> _Part:
    key = seg.flow.astype(np.int64) * 2 + seg.direction
    end = seg.end_seq
    data = np.flatnonzero(end > seg.seq)  # payload, SYN or FIN: occupies sequence space
    if data.shape[0] == 0:
        return _empty()
    d_end = _global(key[data], end[data])
    by_end = np.argsort(d_end, kind="stable")
    d_end_sorted = d_end[by_end]
    retrans = (seg.events[data] & (RETRANSMISSION | OUT_OF_ORDER)) != 0
    r_end = np.sort(d_end[retrans])
    # a never-retransmitted segment may still share its range with a later retransmission
    # that was cut differently: treat every segment whose end a retransmission covers as sent
    # twice (retransmission starts are sorted with a running maximum of their ends)
    r_start = _global(key[data][retrans], seg.seq[data][retrans])
    r_order = np.argsort(r_start, kind="stable")
    r_start_sorted = r_start[r_order]
    r_end_cummax = np.maximum.accumulate(d_end[retrans][r_order]) if r_order.size else r_order
    k = np.searchsorted(r_start_sorted, d_end, side="left") - 1
    covered = np.zeros(data.shape[0], dtype=bool)
    has = k >= 0
    covered[has] = r_end_cummax[k[has]] >= d_end[has]
    ambiguous = retrans | covered

    # ACKs sent by the other direction, in the data direction's key space
    is_ack = (seg.flags & 0x10) != 0
    acks = np.flatnonzero(is_ack)
    a_key_own = key[acks]
    a_key_data = a_key_own ^ 1
    a_val = seg.ack[acks]
    own = _global(a_key_own, a_val)
    prev_max = np.maximum.accumulate(own)
    prev = np.empty_like(prev_max)
    prev[1:] = prev_max[:-1]
    starts = run_starts(a_key_own)
    prev[starts] = np.iinfo(np.int64).min
    advances = own > prev
    sel = np.flatnonzero(advances)
    ga = _global(a_key_data[sel], a_val[sel])
    shift = (a_key_data[sel] - a_key_own[sel]) << _SEQ_BITS
    gprev = np.where(starts[sel], a_key_data[sel] << _SEQ_BITS, prev[sel] + shift)
    idx = np.searchsorted(d_end_sorted, ga, side="right") - 1
    ok = idx >= 0
    idx_c = np.maximum(idx, 0)
    newest = by_end[idx_c]
    ok &= d_end_sorted[idx_c] > gprev  # the newest covered segment is newly acknowledged
    ok &= (d_end_sorted[idx_c] >> _SEQ_BITS) == a_key_data[sel]
    # Karn: no retransmitted segment in the newly acknowledged range
    n_retrans = np.searchsorted(r_end, ga, side="right") - np.searchsorted(r_end, gprev, "right")
    ok &= n_retrans == 0
    ok &= ~ambiguous[newest]
    ack_rows = acks[sel][ok]
    sent_rows = data[newest[ok]]

    # SACK: the first block reports the most recently received segment (RFC 2018 §4)
    sacking = np.flatnonzero(is_ack & (seg.sack_count > 0))
    s_key = key[sacking] ^ 1
    right = seg.sack_right[sacking, 0]
    fresh = right > seg.ack[sacking]
    g_right = _global(s_key, right)
    _, first = np.unique(g_right, return_index=True)
    first_mask = np.zeros(sacking.shape[0], dtype=bool)
    first_mask[first] = True
    j = np.searchsorted(d_end_sorted, g_right, side="left")
    jc = np.minimum(j, max(d_end_sorted.shape[0] - 1, 0))
    hit = fresh & first_mask & (j < d_end_sorted.shape[0])
    hit &= d_end_sorted[jc] == g_right
    hit &= ~ambiguous[by_end[jc]]
    sack_ack_rows = sacking[hit]
    sack_sent_rows = data[by_end[jc[hit]]]

    ack_all = np.concatenate([ack_rows, sack_ack_rows])
    sent_all = np.concatenate([sent_rows, sack_sent_rows])
    later = seg.time_ns[ack_all] >= seg.time_ns[sent_all]
    ack_all = ack_all[later]
    sent_all = sent_all[later]
    flow = seg.flow[sent_all].astype(np.int64)
    direction = seg.direction[sent_all].astype(np.int64)
    kind = np.full(ack_all.shape[0], RTT_DATA_ACK, dtype=np.int64)
    return flow, direction, kind, ack_all.astype(np.int64), sent_all.astype(np.int64)


def _first_of_each(code: I64) -> tuple[I64, I64]:
    """Distinct codes and the index of each one's first occurrence.

    TSvals (and their echoes) only grow within a direction (RFC 7323 §5.3), so the codes are
    almost always already sorted and a change scan suffices; otherwise fall back to a sort.
    """
    if code.size and np.all(code[1:] >= code[:-1]):
        first = np.flatnonzero(np.r_[True, code[1:] != code[:-1]])
        return code[first], first
    values, first = np.unique(code, return_index=True)
    return values, first


def _timestamps(seg: Segments) -> _Part:
    key = seg.flow.astype(np.int64) * 2 + seg.direction
    ts = np.flatnonzero(seg.has_ts)
    if ts.size == 0:
        return _empty()
    sent_codes, sent_first = _first_of_each((key[ts] << 32) | seg.ts_val[ts].astype(np.int64))
    echo = ts[seg.ts_ecr[ts] != 0]
    own_codes, echo_first = _first_of_each((key[echo] << 32) | seg.ts_ecr[echo].astype(np.int64))
    echo_codes = own_codes ^ (1 << 32)  # in the key of the direction whose TSval is echoed
    pos = np.searchsorted(sent_codes, echo_codes)
    posc = np.minimum(pos, sent_codes.shape[0] - 1)
    match = (pos < sent_codes.shape[0]) & (sent_codes[posc] == echo_codes)
    sent_rows = ts[sent_first[posc[match]]]
    ack_rows = echo[echo_first[match]]
    later = seg.time_ns[ack_rows] >= seg.time_ns[sent_rows]
    sent_rows = sent_rows[later]
    ack_rows = ack_rows[later]
    flow = seg.flow[sent_rows].astype(np.int64)
    direction = seg.direction[sent_rows].astype(np.int64)
    kind = np.full(sent_rows.shape[0], RTT_TIMESTAMP, dtype=np.int64)
    return flow, direction, kind, ack_rows.astype(np.int64), sent_rows.astype(np.int64)


def _handshake(seg: Segments, hs: Handshake) -> _Part:
    syn_ok = (hs.syn >= 0) & (hs.synack >= 0)
    ack_ok = (hs.synack >= 0) & (hs.ack >= 0)
    f_syn = np.flatnonzero(syn_ok)
    f_ack = np.flatnonzero(ack_ok)
    flow = np.concatenate([f_syn, f_ack]).astype(np.int64)
    direction = np.concatenate([np.zeros(f_syn.size, np.int64), np.ones(f_ack.size, np.int64)])
    kind = np.concatenate(
        [
            np.full(f_syn.size, RTT_HANDSHAKE_SYN, np.int64),
            np.full(f_ack.size, RTT_HANDSHAKE_SYNACK, np.int64),
        ]
    )
    ack_rows = np.concatenate([hs.synack[f_syn], hs.ack[f_ack]])
    sent_rows = np.concatenate([hs.syn[f_syn], hs.synack[f_ack]])
    later = seg.time_ns[ack_rows] >= seg.time_ns[sent_rows]
    return flow[later], direction[later], kind[later], ack_rows[later], sent_rows[later]


def rtt_stats(rtt: RttSamples, n_flows: int) -> tuple[I64, I64, I64]:
    """Per flow min, median and p95 (nearest rank) of the data → ACK samples; -1 without any.

    One sort of ``flow << 40 | rtt`` (RTTs are below 2**40 ns, about 18 minutes) serves every
    flow at once.
    """
    sel = np.flatnonzero(rtt.kind == RTT_DATA_ACK)
    flow = rtt.flow[sel].astype(np.int64)
    val = np.minimum(rtt.rtt_ns[sel], (1 << 40) - 1)
    ordered = np.sort((flow << 40) | val)
    val = ordered & ((1 << 40) - 1)
    counts = np.bincount(flow, minlength=n_flows)
    first = np.zeros(n_flows, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    has = counts > 0
    c = counts[has]
    out = [np.full(n_flows, -1, dtype=np.int64) for _ in range(3)]
    out[0][has] = val[first[has]]
    out[1][has] = val[first[has] + (c - 1) // 2]
    out[2][has] = val[first[has] + np.ceil(0.95 * c).astype(np.int64) - 1]
    return out[0], out[1], out[2]
