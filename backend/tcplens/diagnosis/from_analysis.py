"""Build the diagnosis views (``transfer.py``) from the TCP analysis and the capture's DNS table.

The TCP analysis is columnar over all flows; the rules want, per connection, the data sender's
segments next to the receiver's acknowledgements. This module only slices and re-times: every
quantity it does not find in ``TcpAnalysis`` (the sender lag) it derives here and says why.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numba
import numpy as np

from tcplens.capture.table import ACK, Capture, address_text, endpoint_text
from tcplens.diagnosis import flow_labels
from tcplens.diagnosis.timeline import Intervals, LabelledTime
from tcplens.diagnosis.transfer import F64, I64, Connection, DnsExchange, FlowFacts, Transfer
from tcplens.tcp.grouping import CHUNKS_PER_THREAD, equal_work_parts
from tcplens.tcp.model import (
    CLIENT_TO_SERVER,
    RESENT_FLAG,
    RTT_DATA_ACK,
    RTT_TIMESTAMP,
    ClockSteps,
    TcpAnalysis,
)

# Above this many connections with data, only the largest are labelled period by period (the
# cross-flow rules still see every connection): a bound on time for hostile or huge captures,
# and the long tail of tiny flows cannot be what made a transfer slow.
MAX_LABELLED_CONNECTIONS = 300


def flow_facts(analysis: TcpAnalysis, origin: int) -> FlowFacts:
    """Per-flow timing and endpoints of every flow, vectorised over flows (times in seconds
    since ``origin``, in ns)."""
    flows = analysis.flows

    def secs(ns: I64) -> F64:
        out: F64 = np.where(ns >= 0, (ns - origin) / 1e9, np.nan)
        return out

    _, last_ns = flows.data_span_ns()
    hs = flows.handshake_rtt_ns
    return FlowFacts(
        id=flows.id.astype(np.int64),
        start_s=(flows.start_ns - origin) / 1e9,
        end_s=(flows.end_ns - origin) / 1e9,
        duration_s=flows.duration_ns / 1e9,
        syn_s=secs(flows.syn_ns),
        established_s=secs(flows.handshake_ack_ns),
        handshake_rtt_s=np.where(hs >= 0, hs / 1e9, np.nan),
        last_data_s=secs(last_ns),
        payload=(flows.bytes_c2s + flows.bytes_s2c).astype(np.int64),
        first_frame=flows.first_frame.astype(np.int64),
        client_addr=flows.client_addr,
        client_port=flows.client_port,
        server_addr=flows.server_addr,
        server_port=flows.server_port,
    )


def labelled_rows(facts: FlowFacts) -> I64:
    """Flow rows labelled period by period: those with payload, the ``MAX_LABELLED_CONNECTIONS``
    largest when there are more (ascending)."""
    order = np.argsort(-facts.payload, kind="stable")[:MAX_LABELLED_CONNECTIONS]
    rows: I64 = np.sort(order[facts.payload[order] > 0])
    return rows


class KernelColumns:
    """The TCP analysis's columns as the diagnosis kernels take them (``flow_labels``)."""

    def __init__(self, analysis: TcpAnalysis) -> None:
        flows, seg, rtt, zw = analysis.flows, analysis.segments, analysis.rtt, analysis.zero_windows
        n = len(flows)
        self.seg = (
            seg.offsets, seg.time_ns, seg.frame, seg.seq, seg.payload_len, seg.ack, seg.window,
            seg.flags,
        )  # fmt: skip
        # (a sample's time is its completing packet's, read through its Segments row)
        self.rtt = (rtt.kind, rtt.direction, rtt.row, rtt.rtt_ns, seg.time_ns)
        # (keys of the column's own type: int64 keys would make numpy copy the column to int64)
        self.rtt_bounds = rtt.offsets
        self.zw = (
            zw.start_ns, zw.end_ns, zw.start_frame, zw.end_frame, zw.reopened, zw.direction,
        )  # fmt: skip
        # zero-window spans grouped by flow, each flow's in their own order
        self.zw_order = np.argsort(zw.flow, kind="stable")
        self.zw_bounds = np.searchsorted(zw.flow[self.zw_order], np.arange(n + 1), side="left")
        self.flows = (
            flows.id.astype(np.int64), flows.start_ns, flows.syn_ns, flows.handshake_ack_ns,
            flows.first_frame, flows.handshake_syn_rtt_ns, flows.handshake_synack_rtt_ns,
            flows.window_scale_client, flows.window_scale_server, flows.mss_client,
            flows.mss_server,
        )  # fmt: skip
        # (RESENT_FLAG of Segments.flags: the one retransmission definition tcplens shows, the
        # flow JSON's and the graphs', tcp.resent)
        self.gather_codes = np.array([ACK, RTT_DATA_ACK, RTT_TIMESTAMP, RESENT_FLAG], np.int64)
        self.clock_steps = analysis.clock_steps


def labelled_time(
    cols: KernelColumns, origin: int, rows: I64, parts: int | None = None
) -> LabelledTime:
    """The labelled time of the connections in flow ``rows`` (ascending), in one compiled call:
    per connection and factor the seconds and intervals, and all intervals with their runs
    merged; a connection's own intervals are labelled again, alone, when a rule asks for them.
    ``parts``: how many parts of about equal rows the connections are shared out in, each taken
    by the next free worker (``tcp.grouping.equal_work_parts``; the rows bound the work: one per
    data segment of the labelled direction; default ``CHUNKS_PER_THREAD`` per numba thread); the
    result does not depend on it."""
    if rows.size == 0:  # (nothing to label: not even the kernel's load is worth paying)
        return LabelledTime.of(Intervals.concat([]))
    runs, seconds, counts = _label(cols, origin, rows, merge=True, parts=parts)

    def exact(c: int) -> Intervals:
        return _label(cols, origin, rows[c : c + 1], merge=False)[0]

    return LabelledTime(cols.flows[0][rows], seconds, counts, runs, exact)


def _label(
    cols: KernelColumns, origin: int, rows: I64, merge: bool, parts: int | None = None
) -> tuple[Intervals, F64, I64]:
    offsets = cols.seg[0]
    # Rows a connection may write: handshake, request delay and turn, one per data segment of
    # its main direction (at most that direction's segments), two per zero-window span.
    c2s = offsets[2 * rows + 1] - offsets[2 * rows]
    s2c = offsets[2 * rows + 2] - offsets[2 * rows + 1]
    sizes = np.maximum(c2s, s2c) + 3 + 2 * (cols.zw_bounds[rows + 1] - cols.zw_bounds[rows])
    bound = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    parts = parts or CHUNKS_PER_THREAD * numba.get_num_threads()
    (flow, t0, t1, factor, frame0, frame1, stall), _, seconds, counts = flow_labels.label_flows(
        rows.astype(np.int64), bound, equal_work_parts(bound, parts),
        np.int64(origin), cols.seg, cols.rtt,
        cols.rtt_bounds, cols.zw, cols.zw_order, cols.zw_bounds, cols.flows, cols.gather_codes,
        merge,
    )  # fmt: skip
    labelled = Intervals(flow, t0, t1, factor, frame0, frame1, stall)
    return _without_clock_steps(
        labelled, seconds, counts, cols.flows[0][rows], cols.clock_steps, origin
    )


def _without_clock_steps(
    spans: Intervals, seconds: F64, counts: I64, flows: I64, steps: ClockSteps, origin: int
) -> tuple[Intervals, F64, I64]:
    """The labelled intervals with the time across the capture's clock steps taken out, as
    ``Flows.duration_ns`` takes it out (``capture.clock``: spliced files, a clock stepped while
    capturing): an interval whose frames enclose a step is cut in two there, at the packets
    before and after it, so no factor is given the hours a splice moved the clock. The pieces
    keep the interval's frames; ``seconds`` and ``counts`` (per connection of ``flows`` and
    factor) follow. The labelling kernels themselves see the capture's times."""
    if steps.frames.size == 0 or spans.t0.size == 0:
        return spans, seconds, counts
    lo, hi = steps.inside(spans.frame0, spans.frame1)
    cut = hi - lo  # steps after the interval's first frame, up to its last
    if not cut.any():
        return spans, seconds, counts
    pieces = cut + 1
    of = np.repeat(np.arange(spans.t0.size), pieces)
    k = np.arange(of.size) - np.repeat(np.cumsum(pieces) - pieces, pieces)  # piece within
    first, last = k == 0, k == cut[of]
    at_s = (steps.at_ns - origin) / 1e9  # the packet after each step
    before_s = at_s - steps.moved_ns / 1e9  # the packet before it
    top = steps.frames.size - 1
    t0 = np.where(first, spans.t0[of], at_s[np.minimum(lo[of] + k - 1, top)])
    t1 = np.where(last, spans.t1[of], before_s[np.minimum(lo[of] + k, top)])
    # (a piece the clock ran backwards through, or none at all between two steps, is dropped)
    keep = (cut[of] == 0) | (t1 > t0)
    of, t0, t1 = of[keep], t0[keep], t1[keep]
    whole = spans.t1[of] - spans.t0[of]
    stall = np.where(spans.stall_s[of] == whole, t1 - t0, np.minimum(spans.stall_s[of], t1 - t0))
    out = Intervals(
        spans.flow[of], t0, t1, spans.factor[of], spans.frame0[of], spans.frame1[of], stall
    )
    labelled = np.flatnonzero((cut > 0) & (spans.factor >= 0))
    if labelled.size and seconds.size:
        n = spans.t0.size
        change = np.bincount(of, weights=t1 - t0, minlength=n) - spans.duration
        more = np.bincount(of, minlength=n) - 1  # pieces kept, less the interval itself
        at = np.searchsorted(flows, spans.flow[labelled])
        factor = spans.factor[labelled].astype(np.int64)
        seconds = seconds.copy()
        counts = counts.copy()
        np.add.at(seconds, (at, factor), change[labelled])
        np.add.at(counts, (at, factor), more[labelled])
    return out, seconds, counts


class LabelledConnections(Mapping[int, Connection]):
    """The labelled connections by flow id, each built when a rule first asks for it: the rules
    look at a few (the worst flow of each factor), the labelling itself needs none."""

    def __init__(
        self, analysis: TcpAnalysis, cols: KernelColumns, origin: int, facts: FlowFacts, rows: I64
    ) -> None:
        self._analysis, self._cols, self._origin, self._facts = analysis, cols, origin, facts
        self._rows = {int(facts.id[r]): int(r) for r in rows.tolist()}
        self._built: dict[int, Connection] = {}

    def __getitem__(self, flow: int) -> Connection:
        if flow not in self._built:
            self._built[flow] = _connection(
                self._analysis, self._cols, self._origin, self._facts, self._rows[flow]
            )
        return self._built[flow]

    def __contains__(self, flow: object) -> bool:
        # (Mapping's own would build the connection to find out)
        return flow in self._rows

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def _connection(
    analysis: TcpAnalysis, cols: KernelColumns, origin: int, facts: FlowFacts, f: int
) -> Connection:
    def maybe(x: float) -> float | None:
        return None if np.isnan(x) else float(x)

    transfers = [tr for d in (0, 1) if (tr := _transfer(analysis, cols, origin, f, d)) is not None]
    return Connection(
        flow=int(facts.id[f]),
        client=endpoint_text(facts.client_addr[f], int(facts.client_port[f])),
        server=endpoint_text(facts.server_addr[f], int(facts.server_port[f])),
        start_s=float(facts.start_s[f]),
        end_s=float(facts.end_s[f]),
        duration_s=float(facts.duration_s[f]),
        syn_s=maybe(float(facts.syn_s[f])),
        established_s=maybe(float(facts.established_s[f])),
        handshake_rtt_s=maybe(float(facts.handshake_rtt_s[f])),
        first_frame=int(facts.first_frame[f]),
        syn_frame=int(facts.first_frame[f]) if not np.isnan(facts.syn_s[f]) else None,
        transfers=tuple(transfers),
    )


def _transfer(
    analysis: TcpAnalysis, cols: KernelColumns, origin: int, f: int, d: int
) -> Transfer | None:
    """Direction ``d`` of flow row ``f``, cut out by the same kernel the labelling uses."""
    flows = analysis.flows
    sender_is_client = d == CLIENT_TO_SERVER
    rcv_scale = flows.window_scale_server[f] if sender_is_client else flows.window_scale_client[f]
    rcv_mss = flows.mss_server[f] if sender_is_client else flows.mss_client[f]
    part = flows.handshake_synack_rtt_ns[f] if sender_is_client else flows.handshake_syn_rtt_ns[f]
    rows = cols.zw_order[cols.zw_bounds[f] : cols.zw_bounds[f + 1]]
    (t, frame, seq, seq_end, retransmission, ack_t, ack_frame, ack, window, ack_payload, rtt_t,
     rtt_s, echo_t, echo_s, zero_start, zero_end, zero_frame0, zero_frame1, zero_reopened, lag,
     mss, shift) = flow_labels.gather_transfer(
        f, d, np.int64(origin), cols.seg, cols.rtt, cols.rtt_bounds[f],
        cols.rtt_bounds[f + 1], cols.zw, rows, rcv_scale, rcv_mss, part, cols.gather_codes,
    )  # fmt: skip
    if t.size == 0:
        return None
    ends = [
        (flows.client_addr[f], flows.client_port[f]),
        (flows.server_addr[f], flows.server_port[f]),
    ]
    sender, receiver = ends if sender_is_client else ends[::-1]
    return Transfer(
        flow=int(flows.id[f]),
        direction="client_to_server" if sender_is_client else "server_to_client",
        sender=endpoint_text(sender[0], int(sender[1])),
        receiver=endpoint_text(receiver[0], int(receiver[1])),
        mss=int(mss),
        window_scale=int(rcv_scale) if rcv_scale >= 0 else int(shift),
        window_scale_inferred=bool(rcv_scale < 0 and shift >= 0),
        lag_s=float(lag),
        t=t, frame=frame, seq=seq, seq_end=seq_end, retransmission=retransmission,
        ack_t=ack_t, ack_frame=ack_frame, ack=ack, window=window, ack_payload=ack_payload,
        rtt_t=rtt_t, rtt_s=rtt_s, echo_t=echo_t, echo_s=echo_s,
        zero_start=zero_start, zero_end=zero_end,
        zero_frames=np.stack((zero_frame0, zero_frame1), axis=1),
        zero_reopened=zero_reopened,
    )  # fmt: skip


def dns_exchanges(capture: Capture, origin_ns: int) -> list[DnsExchange]:
    """Each DNS query with its answer (same id and name, first response after it).

    ``origin_ns`` is the time the TCP analysis counts from, so both share one clock.
    """
    dns, addresses = capture.dns, capture.packets.addresses
    if dns.packet_index.size == 0:
        return []
    origin = origin_ns
    t = (dns.ts_ns - origin) / 1e9
    frame = dns.packet_index + 1  # row i is frame i + 1
    answers = dns.answer_addrs
    pending: dict[tuple[int, str], int] = {}
    out: list[DnsExchange] = []
    # DNS messages are few (a handful per connection at most); pairing them is a dictionary walk.
    for i in range(dns.packet_index.size):
        key = (int(dns.dns_id[i]), str(dns.qname[i]))
        if not dns.is_response[i]:
            pending[key] = i
            continue
        q = pending.pop(key, None)
        if q is None:
            continue
        addr = addresses[dns.src_id[q]]
        out.append(
            DnsExchange(
                query_t=float(t[q]),
                answer_t=float(t[i]),
                query_frame=int(frame[q]),
                answer_frame=int(frame[i]),
                qname=key[1],
                qtype=int(dns.qtype[q]),
                client=address_text(addr),
                answers=tuple(answers[i]) if i < len(answers) else (),
                rcode=int(dns.rcode[i]),
            )
        )
    for key, q in pending.items():
        addr = addresses[dns.src_id[q]]
        out.append(
            DnsExchange(
                query_t=float(t[q]),
                answer_t=None,
                query_frame=int(frame[q]),
                answer_frame=None,
                qname=key[1],
                qtype=int(dns.qtype[q]),
                client=address_text(addr),
                answers=(),
            )
        )
    out.sort(key=lambda x: x.query_t)
    return out
