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
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from tcplens.tcp.model import (
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


def rtt_samples(seg: Segments, hs: Handshake, data_ack: tuple[I64, I64]) -> RttSamples:
    """All RTT samples of all flows, sorted by flow, then by the completing packet's frame.

    ``data_ack`` holds the (acknowledging row, timed row) pairs that the per-packet state
    machine chose.
    """
    ack_rows, sent_rows = data_ack
    parts = [
        (np.full(ack_rows.size, RTT_DATA_ACK, np.int64), ack_rows, sent_rows),
        _timestamps(seg),
        _handshake(hs),
    ]
    kind = np.concatenate([p[0] for p in parts]).astype(np.uint8)
    ack_row = np.concatenate([p[1] for p in parts])
    sent_row = np.concatenate([p[2] for p in parts])
    order = np.argsort(
        (seg.flow[ack_row].astype(np.int64) << 32) | seg.frame[ack_row], kind="stable"
    )
    ack_row, sent_row, kind = ack_row[order], sent_row[order], kind[order]
    time_ns = seg.time_ns[ack_row]
    rtt_ns = time_ns - seg.time_ns[sent_row]
    keep = rtt_ns >= 0  # a capture's clock can step back: a negative RTT is no sample
    return RttSamples(
        flow=seg.flow[ack_row][keep],
        direction=seg.direction[sent_row][keep],
        kind=kind[keep],
        time_ns=time_ns[keep],
        rtt_ns=rtt_ns[keep],
        frame=seg.frame[ack_row][keep],
        sent_frame=seg.frame[sent_row][keep],
    )


_Part = tuple[I64, I64, I64]  # kind, completing row, timed row


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
    ts = np.flatnonzero(seg.has_ts)
    if ts.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    # one int64 code per (flow direction, 32-bit value); built for the TS rows only
    key = (seg.flow[ts].astype(np.int64) << 1) | seg.direction[ts]
    sent_codes, sent_first = _first_of_each((key << 32) | seg.ts_val[ts])
    sent_first = ts[sent_first]
    echoing = seg.ts_ecr[ts] != 0
    echo = ts[echoing]
    own_codes, echo_first = _first_of_each((key[echoing] << 32) | seg.ts_ecr[echo])
    del key, echoing, ts
    echo_codes = own_codes ^ (1 << 32)  # in the key of the direction whose TSval is echoed
    pos = np.searchsorted(sent_codes, echo_codes)
    posc = np.minimum(pos, sent_codes.shape[0] - 1)
    match = (pos < sent_codes.shape[0]) & (sent_codes[posc] == echo_codes)
    sent_rows = sent_first[posc[match]]
    ack_rows = echo[echo_first[match]]
    kind = np.full(sent_rows.shape[0], RTT_TIMESTAMP, dtype=np.int64)
    return kind, ack_rows.astype(np.int64), sent_rows.astype(np.int64)


def _handshake(hs: Handshake) -> _Part:
    f_syn = np.flatnonzero((hs.syn >= 0) & (hs.synack >= 0))
    f_ack = np.flatnonzero((hs.synack >= 0) & (hs.ack >= 0))
    kind = np.concatenate(
        [
            np.full(f_syn.size, RTT_HANDSHAKE_SYN, np.int64),
            np.full(f_ack.size, RTT_HANDSHAKE_SYNACK, np.int64),
        ]
    )
    ack_rows = np.concatenate([hs.synack[f_syn], hs.ack[f_ack]])
    sent_rows = np.concatenate([hs.syn[f_syn], hs.synack[f_ack]])
    return kind, ack_rows, sent_rows


def rtt_stats(
    rtt: RttSamples, n_flows: int, syn_rtt_ns: I64, synack_rtt_ns: I64
) -> tuple[I64, I64, I64]:
    """Per flow min, median and p95 (nearest rank) of the *path* round-trip time; -1 without any.

    The path RTT is end to end: client → server → client, wherever the capture sat. A data → ACK
    sample only times the part beyond the capture point towards the data's receiver, so at a
    capture near the receiver it is the receiver's own ACK turnaround (tens of µs), not the
    path. So each flow is summarised from the data → ACK samples of one direction, the one with
    the most samples (the bulk of the data), each plus the round trip from the capture point
    back to that direction's sender: the handshake half on the sender's side (SYN/ACK → ACK
    for the client's data, SYN → SYN/ACK for the server's; about 0 at a sender-side capture and
    what completes a mid-path one). Without a handshake that half is the smallest data → ACK
    sample of the other direction (it times the same stretch), else 0.

    One sort of ``(flow, direction) << 40 | rtt`` (RTTs are below 2**40 ns, about 18 minutes)
    serves every flow at once.
    """
    sel = np.flatnonzero(rtt.kind == RTT_DATA_ACK)
    key = rtt.flow[sel].astype(np.int64) * 2 + rtt.direction[sel]
    val = np.minimum(rtt.rtt_ns[sel], (1 << 40) - 1)
    out = [np.full(n_flows, -1, dtype=np.int64) for _ in range(3)]
    if val.size == 0:
        return out[0], out[1], out[2]
    if 2 * n_flows < 1 << 23:
        ordered = np.sort((key << 40) | val)
        val = ordered & ((1 << 40) - 1)
    else:  # too many flows to pack the key beside the value
        val = val[np.lexsort((val, key))]
    # Each (flow, direction) is now a sorted run: its first value is its minimum.
    per_dir = np.bincount(key, minlength=2 * n_flows)
    first_dir = np.zeros(2 * n_flows, dtype=np.int64)
    np.cumsum(per_dir[:-1], out=first_dir[1:])
    f = np.arange(n_flows)
    bulk = (per_dir[1::2] > per_dir[0::2]).astype(np.int64)  # client → server on a tie
    other = 2 * f + 1 - bulk
    other_min = np.where(per_dir[other] > 0, val[np.minimum(first_dir[other], val.size - 1)], 0)
    handshake_half = np.where(bulk == 0, synack_rtt_ns, syn_rtt_ns)
    half = np.where(handshake_half >= 0, handshake_half, other_min)
    c = per_dir[2 * f + bulk]
    first = first_dir[2 * f + bulk]
    has = c > 0
    c, first, half = c[has], first[has], half[has]
    out[0][has] = val[first] + half
    out[1][has] = val[first + (c - 1) // 2] + half
    out[2][has] = val[first + np.ceil(0.95 * c).astype(np.int64) - 1] + half
    return out[0], out[1], out[2]
