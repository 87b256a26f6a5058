"""Packet table → :class:`~tcplens.tcp.model.TcpAnalysis`: the TCP analysis entry point."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import FIN, RST, PacketTable
from tcplens.tcp.flows import assign_flows
from tcplens.tcp.grouping import group_reduce
from tcplens.tcp.model import (
    Flows,
    RttSamples,
    Segments,
    TcpAnalysis,
)
from tcplens.tcp.resent import resent_segments
from tcplens.tcp.rtt import rtt_samples, rtt_stats
from tcplens.tcp.segments import Handshake, build_segments
from tcplens.tcp.vantage import infer_vantage
from tcplens.tcp.window import idle_gaps, zero_window_spans

I64 = npt.NDArray[np.int64]


def analyze_tcp(packets: PacketTable) -> TcpAnalysis:
    """Analyse every TCP flow of a capture (see :mod:`tcplens.tcp.model` for the result).

    Non-TCP, malformed and undecoded packets are ignored; a capture without TCP gives empty
    tables. ``backend/tests/tcp`` has small synthetic captures that show each rule.
    """
    start_ns = int(packets.ts_ns.min()) if len(packets) else 0
    fa = assign_flows(packets)
    segments, handshake, flow_order, data_ack, zero_spans = build_segments(packets, fa)
    clients = _Clients(fa.n_flows, fa.client_row, fa.client_from_syn, fa.first_row)
    del fa  # its per-packet columns are no longer needed: free them before the next stages
    rtt = rtt_samples(segments, handshake, data_ack)
    flows = _flows(packets, clients, segments, handshake, rtt)
    zero = zero_window_spans(segments, zero_spans)
    gaps = idle_gaps(segments, flows.rtt_median_ns, flow_order)
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
    client_row: I64
    client_from_syn: npt.NDArray[np.bool_]
    first_row: I64


def _flows(
    packets: PacketTable,
    fa: _Clients,
    seg: Segments,
    hs: Handshake,
    rtt: RttSamples,
) -> Flows:
    n = fa.n_flows
    key = seg.flow.astype(np.int64) * 2 + seg.direction
    per_dir = np.diff(seg.offsets)
    t = seg.time_ns
    start = group_reduce(seg.flow, t, n, np.minimum, 0)
    end = group_reduce(seg.flow, t, n, np.maximum, 0)

    data = np.flatnonzero(seg.payload_len > 0)
    hi = group_reduce(key[data], seg.seq[data] + seg.payload_len[data], 2 * n, np.maximum, 0)
    lo = group_reduce(key[data], seg.seq[data], 2 * n, np.minimum, 0)
    unique_bytes = hi - lo
    retrans = np.bincount(key[resent_segments(seg)], minlength=2 * n)
    fin = np.bincount(seg.flow[(seg.flags & FIN) != 0], minlength=n) > 0
    rst = np.bincount(seg.flow[(seg.flags & RST) != 0], minlength=n) > 0
    ts_dir = np.bincount(key[seg.has_ts], minlength=2 * n) > 0
    syn_ns = np.where(hs.syn >= 0, t[hs.syn], -1)
    synack_ns = np.where(hs.synack >= 0, t[hs.synack], -1)
    ack_ns = np.where(hs.ack >= 0, t[hs.ack], -1)
    syn_rtt = np.where((syn_ns >= 0) & (synack_ns >= syn_ns), synack_ns - syn_ns, -1)
    synack_rtt = np.where((synack_ns >= 0) & (ack_ns >= synack_ns), ack_ns - synack_ns, -1)
    rtt_min, rtt_median, rtt_p95 = rtt_stats(rtt, n, syn_rtt, synack_rtt)

    client_row = fa.client_row  # a packet the client sent: its source is the client
    return Flows(
        id=np.arange(1, n + 1, dtype=np.int64),
        ip_version=packets.ip_version[client_row],
        client_addr=packets.addresses[packets.src_id[client_row]],
        client_port=packets.src_port[client_row],
        server_addr=packets.addresses[packets.dst_id[client_row]],
        server_port=packets.dst_port[client_row],
        client_from_syn=fa.client_from_syn,
        first_frame=packets.frame[fa.first_row],
        start_ns=start,
        end_ns=end,
        packets=per_dir[0::2] + per_dir[1::2],
        packets_c2s=per_dir[0::2].copy(),
        packets_s2c=per_dir[1::2].copy(),
        bytes_c2s=unique_bytes[0::2].copy(),
        bytes_s2c=unique_bytes[1::2].copy(),
        retransmissions_c2s=retrans[0::2].astype(np.int64),
        retransmissions_s2c=retrans[1::2].astype(np.int64),
        syn_ns=syn_ns,
        synack_ns=synack_ns,
        handshake_ack_ns=ack_ns,
        handshake_syn_rtt_ns=syn_rtt,
        handshake_synack_rtt_ns=synack_rtt,
        rtt_min_ns=rtt_min,
        rtt_median_ns=rtt_median,
        rtt_p95_ns=rtt_p95,
        window_scale_client=hs.window_scale_client,
        window_scale_server=hs.window_scale_server,
        mss_client=hs.mss_client,
        mss_server=hs.mss_server,
        sack_permitted=hs.sack_permitted,
        timestamps=ts_dir[0::2] & ts_dir[1::2],
        fin_seen=fin,
        rst_seen=rst,
        vantage=infer_vantage(syn_rtt, synack_rtt, rtt, n),
    )
