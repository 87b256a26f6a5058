"""Packet table → :class:`~tcplens.tcp.model.TcpAnalysis`: the TCP analysis entry point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.compiled import empty
from tcplens.tcp.flows import assign_flows
from tcplens.tcp.model import (
    Flows,
    Segments,
    TcpAnalysis,
)
from tcplens.tcp.rtt import PathRtt, rtt_samples
from tcplens.tcp.segments import FlowFacts, Handshake, build_segments
from tcplens.tcp.vantage import infer_vantage
from tcplens.tcp.window import idle_gaps, zero_window_spans

I64 = npt.NDArray[np.int64]


def analyze_tcp(packets: PacketTable, start_ns: int | None = None) -> TcpAnalysis:
    """Analyse every TCP flow of a capture (see :mod:`tcplens.tcp.model` for the result).

    Non-TCP, malformed and undecoded packets are ignored; a capture without TCP gives empty
    tables. ``backend/tests/tcp`` has small synthetic captures that show each rule.
    ``start_ns`` is the capture's earliest packet time when the caller knows it (the reader's
    ``CaptureInfo.first_ts_ns``), which saves a pass over every packet's time.
    """
    if start_ns is None:
        start_ns = int(packets.ts_ns.min()) if len(packets) else 0
    # scratch shared by the passes (its pages are touched once for all of them): the flow
    # assignment's tags and the flow layout's rows (its second half, read by build_segments),
    # then two values per TCP packet for the per-flow passes: build_segments only uses the
    # first (it must not overwrite the layout), rtt_samples both
    scratch = empty(2 * len(packets), np.int32)
    fa = assign_flows(packets, scratch)
    work = scratch[: 2 * fa.n_packets].reshape(2, -1)
    del scratch
    segments, handshake, facts = build_segments(packets, fa, work[0])
    clients = _Clients(fa.n_flows, fa.client_from_syn, fa.first_row)
    del fa  # its per-packet columns are no longer needed: free them before the next stages
    times = _HandshakeTimes.of(segments, handshake)
    rtt, path = rtt_samples(
        packets, segments, handshake, facts, (times.syn_rtt_ns, times.synack_rtt_ns), work
    )
    del work
    flows = _flows(packets, clients, segments, handshake, facts, times, path)
    zero = zero_window_spans(segments, facts.zero_windows)
    gaps = idle_gaps(segments, flows.rtt_median_ns, facts.idle_before, facts.idle_after)
    return TcpAnalysis(
        capture_start_ns=start_ns,
        flows=flows,
        segments=segments,
        rtt=rtt,
        zero_windows=zero,
        idle_gaps=gaps,
    )


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
    packets: PacketTable,
    fa: _Clients,
    seg: Segments,
    hs: Handshake,
    facts: FlowFacts,
    times: _HandshakeTimes,
    path: PathRtt,
) -> Flows:
    n = fa.n_flows
    per_dir = np.diff(seg.offsets)
    # The endpoints from a packet whose direction is known: the flow's first client → server
    # segment (its source is the client), else its first server → client one (its destination
    # is), e.g. a capture that starts at the server's SYN/ACK and holds nothing from the client.
    c2s_start, s2c_start = seg.offsets[0:-1:2], seg.offsets[1::2]
    from_client = s2c_start > c2s_start
    row = seg.frame[np.where(from_client, c2s_start, s2c_start)].astype(np.int64) - 1
    client_id = np.where(from_client, packets.src_id[row], packets.dst_id[row])
    server_id = np.where(from_client, packets.dst_id[row], packets.src_id[row])
    return Flows(
        id=np.arange(1, n + 1, dtype=np.int64),
        ip_version=packets.ip_version[row],
        client_addr=packets.addresses[client_id],
        client_port=np.where(from_client, packets.src_port[row], packets.dst_port[row]),
        server_addr=packets.addresses[server_id],
        server_port=np.where(from_client, packets.dst_port[row], packets.src_port[row]),
        client_from_syn=fa.client_from_syn,
        first_frame=(fa.first_row + 1).astype(np.uint32),  # row i is frame i + 1
        start_ns=facts.first_ns,
        end_ns=facts.last_ns,
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
        window_scale_client=hs.window_scale_client,
        window_scale_server=hs.window_scale_server,
        mss_client=hs.mss_client,
        mss_server=hs.mss_server,
        sack_permitted=hs.sack_permitted,
        timestamps=facts.has_ts[:, 0] & facts.has_ts[:, 1],
        fin_seen=facts.fin,
        rst_seen=facts.rst,
        vantage=infer_vantage(times.syn_rtt_ns, times.synack_rtt_ns, path.data_ack_min_ns),
    )
