"""Build the per-direction series (:class:`~tcplens.tcp.model.Segments`) and per-flow facts.

The packets are grouped by flow and direction (:mod:`tcplens.tcp.grouping`), then the
per-packet state machine (:mod:`tcplens.tcp.events`) walks each flow in capture order, flows in
parallel, and writes every per-packet result straight to the packet's row of the
``(flow, direction, frame)`` layout. The columns are allocated here, once, at their final size
and type; the pass writes each row of each column exactly once (no fill with defaults first, no
copies afterwards). The frame column is the layout's rows themselves, overwritten in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.compiled import empty, empty_columns, kernel
from tcplens.tcp.events import flow_events
from tcplens.tcp.flows import FlowAssignment
from tcplens.tcp.model import Segments

I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Handshake:
    """Per-flow handshake facts (row numbers in :class:`Segments`; -1 when absent)."""

    syn: I64  # last pure SYN before the first SYN/ACK
    synack: I64  # first SYN/ACK
    ack: I64  # the client's first ACK after the SYN/ACK
    window_scale_client: I8  # 0..14, -1 unknown (handshake not captured)
    window_scale_server: I8
    mss_client: I32
    mss_server: I32
    sack_permitted: B


@dataclass(frozen=True)
class FlowFacts:
    """What the per-packet pass learnt about each flow besides its handshake.

    Per direction arrays have shape ``(n_flows, 2)``; the RTT, span and gap rows are the
    variable-length outputs of the pass, already in ``(flow, capture order)`` order.
    """

    first_ns: I64  # earliest packet time of the flow
    last_ns: I64  # latest packet time of the flow
    unique_bytes: I64  # (F, 2) highest data end - lowest data start (0 without data)
    resent: I64  # (F, 2) data segments re-sending sequence space (tcp.resent)
    has_ts: B  # (F, 2) the direction sent the timestamps option
    data_first_ns: I64  # (F, 2) earliest / latest time of a segment with payload, -1 without
    data_last_ns: I64
    first_syn_ns: I64  # first SYN without ACK: the client's first, else the server's; -1 without
    fin: B
    rst: B
    chunks: I64  # flow boundaries of the parallel chunks (tcp.grouping)
    # data → ACK pairs (Karn, SACK-aware) of flow f: rtt_count[f] rows from 2 * its first row
    rtt_count: I64
    rtt_ack: I32  # Segments row of the acknowledging packet ...
    rtt_sent: I32  # ... and of the data segment it times
    zero_windows: I32  # (k, 3): first zero-window row, reopening (or last) row, reopened
    idle_before: I32  # Segments rows around silences longer than IDLE_GAP_MIN_NS
    idle_after: I32


def build_segments(
    packets: PacketTable, fa: FlowAssignment, work: I32
) -> tuple[Segments, Handshake, FlowFacts]:
    """The per-direction series, the handshake facts and the other per-flow facts.

    ``work`` is an int32 array of one value per TCP packet that the pass may overwrite: it
    becomes ``Segments.flags`` and ``Segments.events`` (two 16-bit values per packet). The
    layout's rows (``fa.layout.rows``) become ``Segments.frame``: the flow assignment is used up.
    """
    layout = fa.layout
    isn = np.stack([fa.isn_client, fa.isn_server], axis=1)
    n = layout.rows.shape[0]
    # every row of these is written by the pass: they may take the pages of packet columns
    # the analysis is done with (``tcp.compiled.empty_columns``)
    dense = empty_columns(
        {
            "time_ns": (n, np.int64),
            "seq": (n, np.int32),
            "payload_len": (n, np.int32),
            "ack": (n, np.int32),
            "window": (n, np.int32),
            "bytes_in_flight": (n, np.int32),
        }
    )
    # the caller's work memory, touched already (flows.assign_flows' tags)
    halves = work[:n].view(np.uint16)
    seg = Segments(
        offsets=layout.offsets,
        frame=layout.rows.view(np.uint32),  # written over the rows (see flow_events)
        flags=halves[:n],
        events=halves[n:],
        # the packet table's SACK entries themselves, read-only (see Segments)
        sack_block_row=packets.sack_block_row,
        sack_block_left=packets.sack_block_left,
        sack_block_right=packets.sack_block_right,
        isn=isn,
        **dense,
    )
    # per-flow regions of the variable-length outputs (see flow_events): only the pages that
    # receive rows are ever touched, so the generous sizes cost address space, not memory
    rtt_ack = empty(2 * n, np.int32)
    rtt_sent = empty(2 * n, np.int32)
    zw = empty(3 * n, np.int32).reshape(n, 3)
    idle = empty(2 * n, np.int32).reshape(n, 2)
    r = flow_events(
        layout.chunks,
        layout.offsets,
        layout.rows,
        isn,
        packets.ts_ns,
        packets.tcp_seq,
        packets.tcp_ack,
        packets.tcp_flags,
        packets.tcp_window,
        packets.tcp_payload_len16,
        packets.long_rows,
        packets.long_payload,
        packets.handshake_rows,
        packets.handshake_wscale,
        packets.handshake_mss,
        packets.handshake_sack_perm,
        packets.sack_block_row,
        packets.sack_block_left,
        packets.sack_block_right,
        packets.tcp_options,
        (
            seg.frame,
            seg.time_ns,
            seg.flags,
            seg.payload_len,
            seg.seq,
            seg.ack,
            seg.window,
            seg.events,
            seg.bytes_in_flight,
        ),
        rtt_ack,
        rtt_sent,
        zw,
        idle,
    )
    (syn, synack, hs_ack, ws, mss, sack_perm, lo, hi, resent, has_ts) = r[:10]
    (data_first_ns, data_last_ns, first_syn_ns) = r[10:13]
    (first_ns, last_ns, fin_rst, n_rtt, n_zw, n_idle) = r[13:]
    handshake = Handshake(
        syn=syn,
        synack=synack,
        ack=hs_ack,
        window_scale_client=np.where(ws[:, 0] == -2, np.int8(0), ws[:, 0]),
        window_scale_server=np.where(ws[:, 1] == -2, np.int8(0), ws[:, 1]),
        mss_client=mss[:, 0].copy(),
        mss_server=mss[:, 1].copy(),
        sack_permitted=sack_perm[:, 0] & sack_perm[:, 1],
    )
    first_row = np.ascontiguousarray(seg.offsets[0:-1:2])
    spans = _compact(zw, first_row, _offsets(n_zw))
    gaps = _compact(idle, first_row, _offsets(n_idle))
    before, after = gaps[:, 0].copy(), gaps[:, 1].copy()
    facts = FlowFacts(
        first_ns=first_ns,
        last_ns=last_ns,
        unique_bytes=hi - lo,
        resent=resent,
        has_ts=has_ts,
        data_first_ns=data_first_ns,
        data_last_ns=data_last_ns,
        first_syn_ns=first_syn_ns,
        fin=(fin_rst & 1) != 0,
        rst=(fin_rst & 2) != 0,
        chunks=layout.chunks,
        rtt_count=n_rtt,
        rtt_ack=rtt_ack,
        rtt_sent=rtt_sent,
        zero_windows=spans,
        idle_before=before,
        idle_after=after,
    )
    return seg, handshake, facts


def _offsets(counts: I64) -> I64:
    out = np.zeros(counts.shape[0] + 1, np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _compact(regions: I32, base: I64, offsets: I64) -> I32:
    """Each flow's rows of a per-flow region output (``regions``: one row per packet, the rows
    of flow ``f`` from ``base[f]``, ``offsets[f + 1] - offsets[f]`` of them), flows one after the
    other. Reads only the rows written: the rest of ``regions`` was never touched (see
    :func:`build_segments`), and copying whole columns would fault its pages in."""
    out = np.empty((int(offsets[-1]), regions.shape[1]), regions.dtype)
    _gather_regions(regions, base, offsets, out)
    return out


@kernel
def _gather_regions(regions, base, offsets, out):  # type: ignore[no-untyped-def]  # pragma: no cover
    for f in range(base.shape[0]):
        start = base[f]
        for j in range(offsets[f + 1] - offsets[f]):
            out[offsets[f] + j, :] = regions[start + j, :]
