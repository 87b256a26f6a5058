"""Group TCP packets into connection instances ("flows") and orient them client → server.

A conversation is the unordered pair of (address, port) endpoints. Within one conversation a
new connection instance starts, as in Wireshark's ``tcp.stream``, when a SYN (without ACK)
arrives whose sequence number differs from the ISN already recorded for that direction: the
port pair has been reused after a FIN/RST or a long idle. A retransmitted SYN (same ISN) stays
in the same flow. Flow ids follow each flow's first packet (DESIGN.md).

Wireshark's conversation table is a sequential state machine over the packets in capture
order, but almost every packet only looks its conversation up: the state (instance, base
sequence number of each direction) changes at few packets. So the work is split in three:

1. in parallel, each part of the capture (a range of PacketTable rows) gets its own small hash
   table of conversations and tags every packet with a local conversation number and its
   direction; it counts the packets of each local conversation and records the few packets
   where the state machine may change: every SYN or SYN/ACK, the first packet of each local
   conversation, and the first packet that can fix the other direction's base after one of
   those (:mod:`tcplens.tcp.conversations`);
2. serially, the state machine runs over those recorded packets only, part after part (so in
   capture order): it maps local conversations to global ones, starts flows, fixes the bases,
   and cuts each local conversation into pieces of one flow each — nearly always one piece
   (:mod:`tcplens.tcp.instances`);
3. in parallel, every packet is written to its place in the flow-major layout
   (:mod:`tcplens.tcp.grouping`): its piece's cursor for its direction in its flow's slice.

Running the state machine on a subsequence gives the same result as on all packets as long as
the subsequence holds every packet that changes the state: packets that start an instance are
a conversation's first packet or pure SYNs, and after an instance starts the only other
change is the first packet that fixes the other direction's base (Wireshark's base_seq), which
each part records for every local conversation still waiting for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from tcplens.capture.table import PacketTable
from tcplens.tcp.compiled import empty
from tcplens.tcp.conversations import local_conversations
from tcplens.tcp.grouping import FlowLayout, scatter_by_flow
from tcplens.tcp.instances import flow_instances

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]
B = npt.NDArray[np.bool_]

# parts of the capture per thread for the parallel passes (equal row ranges, taken one at a time
# by the workers, see grouping.CHUNKS_PER_THREAD); each part rediscovers the conversations it
# sees, so not many (8 were no faster than 2, with a busy loop on one core or not)
PARTS_PER_THREAD = 2


@dataclass(frozen=True)
class FlowAssignment:
    """The flows of a capture's TCP packets: per-flow facts and the packets laid out by flow."""

    layout: FlowLayout  # the TCP packets grouped by flow and direction, in capture order
    client_from_syn: B  # per flow: the client was identified by a SYN or SYN/ACK
    first_row: I64  # per flow: PacketTable row of the flow's first packet
    isn_client: U32  # per flow: Wireshark's base sequence number of each direction
    isn_server: U32

    @property
    def n_flows(self) -> int:
        return int(self.first_row.shape[0])

    @property
    def n_packets(self) -> int:
        """Number of TCP packets."""
        return int(self.layout.rows.shape[0])


def assign_flows(packets: PacketTable, scratch: I32 | None = None) -> FlowAssignment:
    """Split the capture's TCP packets into flows (see module docstring).

    ``scratch`` is an int32 array of at least two values per PacketTable row that the passes
    may overwrite (the caller's work memory, so its pages are touched once for all its uses):
    the first half holds each row's tag while the flows are found, the second half the
    layout's rows (:attr:`FlowLayout.rows`), which the per-packet pass turns into
    :attr:`Segments.frame <tcplens.tcp.model.Segments.frame>` in place.
    """
    n_rows = len(packets)
    if scratch is None:
        scratch = empty(2 * n_rows, np.int32)
    tag = scratch[:n_rows]
    parts = max(1, min(n_rows, PARTS_PER_THREAD * numba.get_num_threads()))
    bounds = (np.arange(parts + 1, dtype=np.int64) * n_rows) // parts
    # per part, regions of these arrays starting at the part's first row: a part has at most
    # as many local conversations and recorded packets as rows; untouched pages cost nothing
    keys = empty(2 * n_rows, np.uint64).reshape(n_rows, 2)
    counts = empty(2 * n_rows, np.int32).reshape(n_rows, 2)
    event_row = empty(n_rows, np.int32)
    event_tag = empty(n_rows, np.int32)
    event_before = empty(2 * n_rows, np.int32).reshape(n_rows, 2)
    n_local = np.zeros(parts, np.int64)
    n_events = np.zeros(parts, np.int64)
    seed = np.uint64(int.from_bytes(os.urandom(8), "little"))
    local_conversations(
        bounds,
        seed,
        packets.status,
        packets.src_id,
        packets.dst_id,
        packets.src_port,
        packets.dst_port,
        packets.tcp_flags,
        tag,
        keys,
        counts,
        event_row,
        event_tag,
        event_before,
        n_local,
        n_events,
    )
    piece = empty(n_rows, np.int32)  # per local conversation: its first piece
    per_flow, offsets, pieces = flow_instances(
        bounds,
        seed,
        n_local,
        n_events,
        keys,
        counts,
        event_row,
        event_tag,
        event_before,
        packets.tcp_seq,
        packets.tcp_ack,
        packets.tcp_flags,
        piece,
    )
    del keys, counts, event_row, event_tag, event_before
    first_row, client_from_syn, isn_client, isn_server = per_flow
    layout = scatter_by_flow(
        bounds, n_local, tag, piece, pieces, offsets, scratch[n_rows : 2 * n_rows]
    )
    return FlowAssignment(
        layout=layout,
        client_from_syn=client_from_syn,
        first_row=first_row,
        isn_client=isn_client,
        isn_server=isn_server,
    )
