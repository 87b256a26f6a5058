"""Build the per-direction series (:class:`~tcplens.tcp.model.Segments`) and handshake facts.

Rows are ordered by ``(flow, direction, frame)`` with one stable sort; sequence numbers are
made relative and unwrapped (:mod:`tcplens.tcp.sequence`); windows are scaled with the shift
negotiated in the handshake (RFC 7323 §2.3), and left raw — flagged unknown — when the
handshake was not captured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import ACK, MAX_SACK_BLOCKS, SYN, PacketTable
from tcplens.tcp.flows import FlowAssignment
from tcplens.tcp.grouping import first_where, last_where, run_starts
from tcplens.tcp.sequence import unwrap_relative

I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
U16 = npt.NDArray[np.uint16]
U32 = npt.NDArray[np.uint32]
B = npt.NDArray[np.bool_]

MAX_WINDOW_SHIFT = 14  # RFC 7323 §2.3: larger shifts are treated as 14


@dataclass(frozen=True)
class Handshake:
    """Per-flow handshake facts (rows of the segment order; -1 when absent)."""

    syn: I64  # last pure SYN before the first SYN/ACK (or the last pure SYN at all)
    synack: I64  # first SYN/ACK
    ack: I64  # the client's first ACK after the SYN/ACK
    window_scale_client: I8
    window_scale_server: I8
    mss_client: I32
    mss_server: I32
    sack_permitted: B


@dataclass(frozen=True)
class SegmentColumns:
    """Packet columns in segment order, before the event analysis."""

    offsets: I64
    key: I64  # 2 * flow + direction
    flow: I32
    direction: U8
    rows: I64
    frame: U32
    time_ns: I64
    seq: I64
    payload_len: I64
    ack: I64
    window_raw: I64
    window: I64
    flags: U16
    sack_count: U8
    sack_left: I64
    sack_right: I64
    has_ts: B
    ts_val: U32
    ts_ecr: U32
    handshake: Handshake


def build_segments(packets: PacketTable, fa: FlowAssignment) -> SegmentColumns:
    """Sort the TCP packets into per-direction series and make their numbers relative."""
    n_flows = fa.n_flows
    key_capture = fa.flow.astype(np.int64) * 2 + fa.direction
    order = np.argsort(key_capture, kind="stable")
    key = key_capture[order]
    rows = fa.rows[order]
    flow = fa.flow[order]
    direction = fa.direction[order]
    offsets = np.zeros(2 * n_flows + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=2 * n_flows), out=offsets[1:])
    start = run_starts(key)

    flags = packets.tcp_flags[rows]
    is_client = direction == 0
    isn_own = np.where(is_client, fa.isn_client[flow], fa.isn_server[flow])
    isn_other = np.where(is_client, fa.isn_server[flow], fa.isn_client[flow])
    seq = unwrap_relative(packets.tcp_seq[rows], isn_own, start)

    # ACK numbers are only meaningful with the ACK flag (a SYN's ack field is arbitrary)
    ack_raw = packets.tcp_ack[rows]
    has_ack = (flags & ACK) != 0
    ack_idx = np.flatnonzero(has_ack)
    ack = np.zeros(rows.shape[0], dtype=np.int64)
    ack[ack_idx] = unwrap_relative(ack_raw[ack_idx], isn_other[ack_idx], run_starts(key[ack_idx]))

    # SACK edges lie near the ACK: relative = relative ack + signed 32-bit distance to it
    sack_count = np.minimum(packets.sack_count[rows], MAX_SACK_BLOCKS).astype(np.uint8)
    used = np.arange(MAX_SACK_BLOCKS)[None, :] < sack_count[:, None]
    sack_left = np.where(
        used, ack[:, None] + (packets.sack_left[rows] - ack_raw[:, None]).view(np.int32), 0
    ).astype(np.int64)
    sack_right = np.where(
        used, ack[:, None] + (packets.sack_right[rows] - ack_raw[:, None]).view(np.int32), 0
    ).astype(np.int64)

    handshake = _handshake(packets, rows, flow, direction, flags, n_flows)
    own_scale = np.where(
        is_client,
        handshake.window_scale_client[flow],
        handshake.window_scale_server[flow],
    )
    window_raw = packets.tcp_window[rows].astype(np.int64)
    scalable = (own_scale >= 0) & ((flags & SYN) == 0)  # SYN windows are never scaled
    window = np.where(scalable, window_raw << np.maximum(own_scale, 0), window_raw)

    return SegmentColumns(
        offsets=offsets,
        key=key,
        flow=flow,
        direction=direction,
        rows=rows,
        frame=packets.frame[rows],
        time_ns=packets.ts_ns[rows],
        seq=seq,
        payload_len=packets.tcp_payload_len[rows].astype(np.int64),
        ack=ack,
        window_raw=window_raw,
        window=window,
        flags=flags,
        sack_count=sack_count,
        sack_left=sack_left,
        sack_right=sack_right,
        has_ts=packets.has_ts[rows],
        ts_val=packets.ts_val[rows],
        ts_ecr=packets.ts_ecr[rows],
        handshake=handshake,
    )


def _handshake(
    packets: PacketTable, rows: I64, flow: I32, direction: U8, flags: U16, n_flows: int
) -> Handshake:
    frame = packets.frame[rows]
    pure_syn = (flags & (SYN | ACK)) == SYN
    syn_ack = (flags & (SYN | ACK)) == (SYN | ACK)
    # rows are in (flow, direction, frame) order, so "per flow" reductions work on `flow`
    synack = first_where(flow, syn_ack, n_flows)
    synack_frame = np.where(synack >= 0, frame[synack], np.iinfo(np.uint32).max)
    before_synack = frame < synack_frame[flow]
    syn = last_where(flow, pure_syn & before_synack, n_flows)
    after_synack = (synack >= 0)[flow] & (frame > synack_frame[flow])
    client_ack = (direction == 0) & ((flags & (SYN | ACK)) == ACK) & after_synack
    ack = first_where(flow, client_ack, n_flows)

    # Window scaling as Wireshark decides it (verify_tcp_window_scaling): a SYN without the
    # option switches scaling off for both sides; a SYN/ACK without it too; -1 = not captured.
    ws_syn = np.where(syn >= 0, packets.wscale[rows[syn]], -1).astype(np.int16)
    ws_synack = np.where(synack >= 0, packets.wscale[rows[synack]], -1).astype(np.int16)
    has_syn = syn >= 0
    has_synack = synack >= 0
    off = (has_syn & (ws_syn < 0)) | (has_synack & (ws_synack < 0))
    client = np.where(has_syn, np.minimum(ws_syn, MAX_WINDOW_SHIFT), -1)
    server = np.where(has_synack, np.minimum(ws_synack, MAX_WINDOW_SHIFT), -1)
    client = np.where(off, 0, client)
    server = np.where(off, 0, server)
    mss_client = np.where(has_syn, packets.mss[rows[syn]], -1).astype(np.int32)
    mss_server = np.where(has_synack, packets.mss[rows[synack]], -1).astype(np.int32)
    sack_ok = has_syn & has_synack & packets.sack_perm[rows[syn]] & packets.sack_perm[rows[synack]]
    return Handshake(
        syn=syn,
        synack=synack,
        ack=ack,
        window_scale_client=client.astype(np.int8),
        window_scale_server=server.astype(np.int8),
        mss_client=mss_client,
        mss_server=mss_server,
        sack_permitted=sack_ok,
    )
