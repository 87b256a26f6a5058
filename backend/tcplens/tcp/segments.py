"""Build the per-direction series (:class:`~tcplens.tcp.model.Segments`) and handshake facts.

The per-packet state machine (:mod:`tcplens.tcp.events`) runs in capture order; here its
results and the packet columns are laid out by ``(flow, direction, frame)`` with one stable
counting sort, so that each direction of each flow is a contiguous slice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.events import PacketAnalysis, analyze_events
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


def build_segments(
    packets: PacketTable, fa: FlowAssignment
) -> tuple[Segments, Handshake, I64, tuple[I64, I64], I64]:
    """The per-direction series, the handshake facts, the ``(flow, frame)`` row order, the
    data → ACK RTT pairs (acknowledging row, timed row) and the zero-window spans (start row,
    end row, reopened).

    The row order lists :class:`Segments` rows in capture order within each flow, which is
    what time-ordered scans over a whole flow (idle gaps, RTT sample order) need.
    """
    n_flows = fa.n_flows
    key = fa.flow * 2 + fa.direction  # int32, like flow
    perm, offsets, position = _counting_sort(key, 2 * n_flows)
    pa: PacketAnalysis = analyze_events(packets, fa, position)
    sack_order = np.argsort(pa.sack_rows, kind="stable")
    segments = Segments(
        offsets=offsets,
        flow=fa.flow[perm],
        direction=fa.direction[perm],
        packet_index=pa.packet_index,
        frame=pa.frame,
        time_ns=pa.time_ns,
        seq=pa.seq,
        payload_len=pa.payload_len,
        ack=pa.ack,
        window=pa.window,
        flags=pa.flags,
        sack_count=pa.sack_count,
        sack_rows=pa.sack_rows[sack_order],
        sack_left=pa.sack_left[sack_order],
        sack_right=pa.sack_right[sack_order],
        has_ts=pa.has_ts,
        ts_val=pa.ts_val,
        ts_ecr=pa.ts_ecr,
        events=pa.events,
        bytes_in_flight=pa.bytes_in_flight,
        window_headroom=pa.window_headroom,
    )
    handshake = Handshake(
        syn=pa.syn,
        synack=pa.synack,
        ack=pa.handshake_ack,
        window_scale_client=pa.window_scale[:, 0].copy(),
        window_scale_server=pa.window_scale[:, 1].copy(),
        mss_client=pa.mss[:, 0].copy(),
        mss_server=pa.mss[:, 1].copy(),
        sack_permitted=pa.sack_permitted,
    )
    # capture order is flow-major once stably grouped by flow alone
    by_flow, _, _ = _counting_sort(fa.flow, n_flows)
    flow_order: I64 = position[by_flow]
    return segments, handshake, flow_order, (pa.rtt_ack, pa.rtt_sent), pa.zero_windows


@numba.njit(cache=True)
def _counting_sort(key, n_keys):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """Stable sort by small integer keys in O(n): (permutation, group offsets, inverse)."""
    n = key.shape[0]
    offsets = np.zeros(n_keys + 1, np.int64)
    for i in range(n):
        offsets[key[i] + 1] += 1
    for k in range(n_keys):
        offsets[k + 1] += offsets[k]
    fill = offsets[:-1].copy()
    perm = np.empty(n, np.int32)
    position = np.empty(n, np.int32)
    for i in range(n):
        k = key[i]
        p = fill[k]
        fill[k] = p + 1
        perm[p] = i
        position[i] = p
    return perm, offsets, position
