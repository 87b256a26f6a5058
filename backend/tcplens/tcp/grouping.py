"""Lay the TCP packets out flow by flow, and cut the flows into chunks for parallel passes.

Every later pass walks one flow at a time (its two directions interleaved in capture order,
as Wireshark's state machine needs them), so the packets are grouped by flow with one stable
counting sort (flow ids are dense, ``0 .. n_flows - 1``): O(n), no comparison sort. Within a
flow the rows keep capture order. The flow's slice in that layout is also its slice in
:class:`~tcplens.tcp.model.Segments` (sorted by ``(flow, direction, frame)``), because both hold
exactly the flow's packets.

Flows are independent once grouped, so the passes run them in parallel (numba ``prange``) over
chunks of whole flows holding about the same number of packets.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.compiled import empty, kernel
from tcplens.tcp.flows import FlowAssignment

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]

# chunks per thread: several, so that a thread slowed down by other work on the machine leaves
# its remaining chunks to the others (numba hands out prange iterations in blocks)
CHUNKS_PER_THREAD = 8


@dataclass(frozen=True)
class FlowLayout:
    """The TCP packets grouped by flow, capture order within each flow."""

    rows: I32  # PacketTable row of each packet, flow-major
    direction: U8  # its direction (0 client → server)
    offsets: I64  # (2 n_flows + 1): Segments rows of direction d of flow f: [2f + d, 2f + d + 1]
    sack_offsets: I64  # (2 n_flows + 1): the same for the SACK blocks of the ACKs (Segments)
    chunks: I64  # flow boundaries of the parallel chunks (ascending, first 0, last n_flows)

    @property
    def n_flows(self) -> int:
        return (int(self.offsets.shape[0]) - 1) // 2


def group_by_flow(packets: PacketTable, fa: FlowAssignment) -> FlowLayout:
    """Counting sort of the TCP packets by flow (see module docstring)."""
    n = fa.rows.shape[0]
    n_flows = fa.n_flows
    rows = empty(n, np.int32)
    direction = empty(n, np.uint8)
    offsets = np.empty(2 * n_flows + 1, np.int64)
    sack_offsets = np.empty(2 * n_flows + 1, np.int64)
    _counting_sort(
        fa.rows,
        fa.flow,
        fa.direction,
        packets.sack_count,
        packets.tcp_flags,
        rows,
        direction,
        offsets,
        sack_offsets,
    )
    n_chunks = max(1, min(n_flows, CHUNKS_PER_THREAD * numba.get_num_threads()))
    # chunk c starts at the first flow whose first packet is at or after c / n_chunks of them
    targets = (np.arange(n_chunks, dtype=np.int64) * n) // n_chunks
    cuts = np.searchsorted(offsets[0:-1:2], targets, side="left")
    chunks = np.unique(np.concatenate([[0], cuts, [n_flows]])).astype(np.int64)
    return FlowLayout(rows, direction, offsets, sack_offsets, chunks)


@kernel
def _counting_sort(  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    tcp_rows, flow, direction, sack_count, tcp_flags, out_rows, out_dir, offsets, sack_offsets
):
    """Stable sort by flow in O(n); per-(flow, direction) counts of packets and ACKs' SACK blocks."""
    n = tcp_rows.shape[0]
    n_keys = offsets.shape[0] - 1
    offsets[:] = 0
    sack_offsets[:] = 0
    for i in range(n):
        k = 2 * flow[i] + direction[i]
        offsets[k + 1] += 1
        r = tcp_rows[i]
        if (tcp_flags[r] & 0x10) != 0:
            sack_offsets[k + 1] += min(sack_count[r], 4)
    for k in range(n_keys):
        offsets[k + 1] += offsets[k]
        sack_offsets[k + 1] += sack_offsets[k]
    fill = offsets[0:-1:2].copy()  # next slot of each flow
    for i in range(n):
        f = flow[i]
        p = fill[f]
        fill[f] = p + 1
        out_rows[p] = tcp_rows[i]
        out_dir[p] = direction[i]
