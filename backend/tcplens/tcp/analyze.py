"""Packet table → :class:`~tcplens.tcp.model.TcpAnalysis`: the TCP analysis entry point."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.memory import recycling
from tcplens.capture.table import (
    DONE_AFTER_EVENTS,
    DONE_AFTER_FLOWS,
    LONG_LENGTH,
    TRUNCATED,
    PacketTable,
)
from tcplens.tcp.compiled import empty
from tcplens.tcp.flows import FlowAssignment, assign_flows
from tcplens.tcp.grouping import FlowLayout
from tcplens.tcp.model import LOST_SEGMENT, ClockSteps, Flows, Segments, TcpAnalysis
from tcplens.tcp.path_rtt import PathRtt
from tcplens.tcp.rtt import rtt_samples
from tcplens.tcp.segments import FlowFacts, Handshake, build_segments
from tcplens.tcp.timestamps import timestamp_echoes
from tcplens.tcp.vantage import infer_vantage
from tcplens.tcp.window import idle_gaps, zero_window_spans

I64 = npt.NDArray[np.int64]


def analyze_tcp(
    packets: PacketTable, start_ns: int | None = None, *, consume: bool = False
) -> TcpAnalysis:
    """Analyse every TCP flow of a capture (see :mod:`tcplens.tcp.model` for the result).

    Non-TCP, malformed and undecoded packets are ignored; a capture without TCP gives empty
    tables. ``backend/tests/tcp`` has small synthetic captures that show each rule.
    ``start_ns`` is the capture's earliest packet time when the caller knows it (the reader's
    ``CaptureInfo.first_ts_ns``), which saves a pass over every packet's time.

    ``consume``: the caller is done with ``packets`` (``report.analyse_capture``): the flow
    assignment and the per-packet pass each hand the columns they read last over
    (``PacketTable.release``: ``DONE_AFTER_FLOWS``, ``DONE_AFTER_EVENTS``), so that the next
    steps' arrays (Segments, RTT samples) take their pages instead of fresh ones: at 5M
    packets the tcp phase touches 220 MiB fresh instead of 406. The timestamp pairs are found
    right after the flow assignment (:mod:`tcplens.tcp.timestamps`), so the timestamp columns
    go with the flow assignment's instead of staying through the per-packet pass.
    """
    if not consume:
        return _analyze(packets, start_ns, _keep)
    with recycling():
        return _analyze(packets, start_ns, packets.release)


def _keep(names: tuple[str, ...]) -> None:
    """The columns stay in the table (the caller reads it again)."""


def _analyze(
    packets: PacketTable, start_ns: int | None, done: Callable[[tuple[str, ...]], None]
) -> TcpAnalysis:
    if start_ns is None:
        start_ns = int(packets.ts_ns.min()) if len(packets) else 0
    # scratch shared by the passes (its pages are touched once for all of them): its first half
    # holds the flow assignment's tags, then Segments.flags and Segments.events (build_segments);
    # its second half the flow layout's rows, which build_segments turns into Segments.frame
    scratch = empty(2 * len(packets), np.int32)
    fa = assign_flows(packets, scratch)
    ends = _Endpoints.of(packets, fa)
    cut = _SnaplenCuts.of(packets, fa.layout)
    steps = _clock_steps(packets)
    echoes = timestamp_echoes(packets, fa.layout)
    done(DONE_AFTER_FLOWS)
    work = scratch[: fa.n_packets]
    del scratch
    segments, handshake, facts = build_segments(packets, fa, work)
    done(DONE_AFTER_EVENTS)
    del work
    clients = _Clients(fa.n_flows, fa.client_from_syn, fa.first_row)
    del fa  # its per-packet columns are no longer needed: free them before the next stages
    times = _HandshakeTimes.of(segments, handshake)
    # (rtt_samples sets a half it finds to be no round trip to -1 in ``times``, as one across a
    # clock step)
    halves = (times.syn_rtt_ns, times.synack_rtt_ns)
    rtt, path = rtt_samples(segments, handshake, facts, echoes, halves, steps.frames)
    del echoes
    flows = _flows(ends, clients, segments, handshake, facts, times, path, cut, steps)
    zero = zero_window_spans(segments, facts.zero_windows)
    gaps = idle_gaps(
        segments, flows.rtt_median_ns, facts.idle_before, facts.idle_after, steps.frames
    )
    return TcpAnalysis(
        capture_start_ns=start_ns,
        flows=flows,
        segments=segments,
        rtt=rtt,
        zero_windows=zero,
        idle_gaps=gaps,
        clock_steps=steps,
    )


@dataclass(frozen=True)
class _Endpoints:
    """Per flow, its endpoints as its client and server."""

    ip_version: npt.NDArray[np.uint8]
    client_addr: npt.NDArray[np.uint8]
    client_port: npt.NDArray[np.uint16]
    server_addr: npt.NDArray[np.uint8]
    server_port: npt.NDArray[np.uint16]
    encapsulation: npt.NDArray[np.uint16]

    @staticmethod
    def of(packets: PacketTable, fa: FlowAssignment) -> _Endpoints:
        # From a packet whose direction is known: the flow's first client → server packet
        # (its source is the client), else its first server → client one (its destination
        # is), e.g. a capture that starts at the server's SYN/ACK and holds nothing from the
        # client. Read before the flow assignment's columns are released (``consume``).
        layout = fa.layout
        start, c2s = layout.offsets[0:-1:2], np.diff(layout.offsets)[0::2]
        from_client = c2s > 0
        # the layout is in Segments order: the flow's first client → server packet is at its
        # start, and so is its first server → client one when the client sent nothing
        row = layout.rows[start].astype(np.int64)
        src, dst = packets.src_id[row], packets.dst_id[row]
        src_port, dst_port = packets.src_port[row], packets.dst_port[row]
        return _Endpoints(
            ip_version=packets.ip_version[row],
            client_addr=packets.addresses[np.where(from_client, src, dst)],
            client_port=np.where(from_client, src_port, dst_port),
            server_addr=packets.addresses[np.where(from_client, dst, src)],
            server_port=np.where(from_client, dst_port, src_port),
            encapsulation=_tunnel_layers(packets, row),
        )


def _tunnel_layers(packets: PacketTable, row: I64) -> npt.NDArray[np.uint16]:
    """The ``ENCAP_*`` bits of each of ``row`` (0: not through a tunnel), from the tunnel
    entries (rows ascending)."""
    rows = packets.tunnel_rows
    if rows.shape[0] == 0:
        return np.zeros(row.shape[0], np.uint16)
    at = np.minimum(np.searchsorted(rows, row), rows.shape[0] - 1)
    layers: npt.NDArray[np.uint16] = np.where(rows[at] == row, packets.tunnel_layers[at], 0)
    return layers.astype(np.uint16)


@dataclass(frozen=True)
class _SnaplenCuts:
    """Per flow, its TCP packets the capture's snaplen cut and the bytes kept of them."""

    packets: I64
    kept: I64

    @staticmethod
    def of(packets: PacketTable, layout: FlowLayout) -> _SnaplenCuts:
        # (read before the flow assignment's columns are released; the layout's rows are the
        # TCP packets, copies and non-TCP packets left out)
        n_flows = layout.n_flows
        kept = np.zeros(n_flows, np.int64)
        if not (packets.status & TRUNCATED).any():  # the usual capture: one pass, no gather
            return _SnaplenCuts(np.zeros(n_flows, np.int64), kept)
        at = np.flatnonzero(packets.status[layout.rows] & TRUNCATED)
        # (Segments rows are flow-major: each flow's cut packets are one run of ``at``)
        starts = np.searchsorted(at, layout.offsets[::2])
        row = layout.rows[at]
        caplen = packets.caplen16[row].astype(np.int64)
        long = caplen == LONG_LENGTH  # (a jumbo frame cut: its length is in the long entries)
        caplen[long] = packets.long_caplen[np.searchsorted(packets.long_rows, row[long])]
        count = np.diff(starts)
        some = np.flatnonzero(count)
        kept[some] = np.maximum.reduceat(caplen, starts[some])
        return _SnaplenCuts(count, kept)


def _clock_steps(packets: PacketTable) -> ClockSteps:
    rows = packets.clock_step_rows.astype(np.int64)
    at = packets.ts_ns[rows]
    return ClockSteps(rows + 1, at, at - packets.ts_ns[rows - 1])


@dataclass(frozen=True)
class _Clients:
    n_flows: int
    client_from_syn: npt.NDArray[np.bool_]
    first_row: I64


@dataclass(frozen=True)
class _HandshakeTimes:
    syn_ns: I64
    synack_ns: I64
    ack_ns: I64
    syn_rtt_ns: I64
    synack_rtt_ns: I64

    @staticmethod
    def of(seg: Segments, hs: Handshake) -> _HandshakeTimes:
        t = seg.time_ns
        syn_ns = np.where(hs.syn >= 0, t[hs.syn], -1)
        synack_ns = np.where(hs.synack >= 0, t[hs.synack], -1)
        ack_ns = np.where(hs.ack >= 0, t[hs.ack], -1)
        syn_rtt = np.where((syn_ns >= 0) & (synack_ns >= syn_ns), synack_ns - syn_ns, -1)
        synack_rtt = np.where((synack_ns >= 0) & (ack_ns >= synack_ns), ack_ns - synack_ns, -1)
        return _HandshakeTimes(syn_ns, synack_ns, ack_ns, syn_rtt, synack_rtt)


def _flows(
    ends: _Endpoints,
    fa: _Clients,
    seg: Segments,
    hs: Handshake,
    facts: FlowFacts,
    times: _HandshakeTimes,
    path: PathRtt,
    cut: _SnaplenCuts,
    steps: ClockSteps,
) -> Flows:
    n = fa.n_flows
    per_dir = np.diff(seg.offsets)
    first_frame = (fa.first_row + 1).astype(np.int64)  # row i is frame i + 1
    n_steps, duration = _durations(seg, facts, first_frame, steps)
    missing, backwards = _capture_gaps(seg)
    return Flows(
        id=np.arange(1, n + 1, dtype=np.int64),
        ip_version=ends.ip_version,
        client_addr=ends.client_addr,
        client_port=ends.client_port,
        server_addr=ends.server_addr,
        server_port=ends.server_port,
        client_from_syn=fa.client_from_syn,
        first_frame=first_frame.astype(np.uint32),
        start_ns=facts.first_ns,
        end_ns=facts.last_ns,
        duration_ns=duration,
        clock_steps=n_steps,
        packets_cut=cut.packets,
        snaplen=cut.kept,
        packets_missing=missing,
        timestamps_backwards=backwards,
        packets=per_dir[0::2] + per_dir[1::2],
        packets_c2s=per_dir[0::2].copy(),
        packets_s2c=per_dir[1::2].copy(),
        bytes_c2s=facts.unique_bytes[:, 0].copy(),
        bytes_s2c=facts.unique_bytes[:, 1].copy(),
        retransmissions_c2s=facts.resent[:, 0].copy(),
        retransmissions_s2c=facts.resent[:, 1].copy(),
        data_first_ns_c2s=facts.data_first_ns[:, 0].copy(),
        data_first_ns_s2c=facts.data_first_ns[:, 1].copy(),
        data_last_ns_c2s=facts.data_last_ns[:, 0].copy(),
        data_last_ns_s2c=facts.data_last_ns[:, 1].copy(),
        first_syn_ns=facts.first_syn_ns,
        syn_ns=times.syn_ns,
        synack_ns=times.synack_ns,
        handshake_ack_ns=times.ack_ns,
        handshake_syn_rtt_ns=times.syn_rtt_ns,
        handshake_synack_rtt_ns=times.synack_rtt_ns,
        rtt_min_ns=path.min_ns,
        rtt_median_ns=path.median_ns,
        rtt_p95_ns=path.p95_ns,
        data_rtt_min_ns_c2s=path.data_ack_min_ns[:, 0].copy(),
        data_rtt_min_ns_s2c=path.data_ack_min_ns[:, 1].copy(),
        data_rtt_median_ns_c2s=path.data_ack_median_ns[:, 0].copy(),
        data_rtt_median_ns_s2c=path.data_ack_median_ns[:, 1].copy(),
        window_scale_client=hs.window_scale_client,
        window_scale_server=hs.window_scale_server,
        mss_client=hs.mss_client,
        mss_server=hs.mss_server,
        sack_permitted=hs.sack_permitted,
        timestamps=facts.has_ts[:, 0] & facts.has_ts[:, 1],
        fin_seen=facts.fin,
        rst_seen=facts.rst,
        vantage=infer_vantage(times.syn_rtt_ns, times.synack_rtt_ns, path.data_ack_min_ns),
        encapsulation=ends.encapsulation,
    )


def _capture_gaps(seg: Segments) -> tuple[I64, I64]:
    """Per flow: segments the capture missed and segments captured before the one before them
    in their direction (``Flows.packets_missing``, ``Flows.timestamps_backwards``), counted from
    the few marked segments."""
    starts, stops = seg.offsets[:-1], seg.offsets[1:]  # 2 per flow: c2s, s2c
    lost = np.flatnonzero(seg.events & LOST_SEGMENT)
    missing = np.searchsorted(lost, stops) - np.searchsorted(lost, starts)
    earlier = np.flatnonzero(seg.time_ns[1:] < seg.time_ns[:-1]) + 1
    backwards = np.searchsorted(earlier, stops) - np.searchsorted(
        earlier, np.minimum(starts + 1, stops)
    )
    return missing.reshape(-1, 2).sum(axis=1), backwards.reshape(-1, 2).sum(axis=1)


def _durations(
    seg: Segments, facts: FlowFacts, first_frame: I64, steps: ClockSteps
) -> tuple[I64, I64]:
    """Per flow: the clock steps inside it and its duration
    without them (``Flows.duration_ns``). A flow without a step keeps ``end - start``; one with
    steps is timed from its first to its last packet in capture order, less what the steps moved
    the clock (the time across a step is unknown, so it counts as none)."""
    n = first_frame.shape[0]
    off = seg.offsets
    per_slice = np.diff(off)
    # each direction's last packet is its slice's last row (Segments order: frame ascending)
    last_row = np.maximum(off[1:] - 1, 0)
    last_of = np.where(per_slice > 0, seg.frame[last_row].astype(np.int64), 0).reshape(n, 2)
    last_frame = last_of.max(axis=1)
    lo, hi = steps.inside(first_frame, last_frame)
    n_steps = hi - lo
    duration = facts.last_ns - facts.first_ns
    jumped = np.flatnonzero(n_steps > 0)
    if jumped.size:
        # the first and last packet in capture order: the direction whose slice holds them
        first_of = np.where(per_slice > 0, seg.frame[np.minimum(off[:-1], len(seg) - 1)], -1)
        first_d = (first_of.reshape(n, 2)[jumped] == first_frame[jumped, None]).argmax(axis=1)
        last_d = last_of[jumped].argmax(axis=1)
        t_first = seg.time_ns[off[2 * jumped + first_d]]
        t_last = seg.time_ns[off[2 * jumped + last_d + 1] - 1]
        moved = np.concatenate(([0], np.cumsum(steps.moved_ns)))  # by the first k steps
        inside = moved[hi[jumped]] - moved[lo[jumped]]
        duration[jumped] = np.maximum(t_last - t_first - inside, 0)
    return n_steps, duration
