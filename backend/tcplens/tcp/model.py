"""The TCP analysis result: frozen dataclasses of numpy arrays.

This is what the graphs draw and what the diagnosis reasons on. Everything is columnar: one
row per flow, per packet of a flow, per RTT sample, per zero-window span, per idle gap. Rows of
different flows live in the same arrays; a ``flow`` column (0-based row in :class:`Flows`, so
``flow + 1`` is the user-facing flow id) ties them together, or, for the two biggest tables, the
sort order: :class:`Segments` is sorted by ``(flow, direction, frame)`` and :class:`RttSamples` by
flow, each with CSR ``offsets`` so that one flow (one direction of it) is a contiguous slice.

Conventions
-----------
* Directions: ``CLIENT_TO_SERVER == 0``, ``SERVER_TO_CLIENT == 1``. The client is the side that
  sent the SYN, else the side that sent the flow's first packet (DESIGN.md).
* Times are ``int64`` nanoseconds since the Unix epoch, like ``PacketTable.ts_ns``;
  :attr:`TcpAnalysis.capture_start_ns` is the capture's first packet, the origin of every
  ``*_s`` number in the JSON output.
* Sequence numbers are *relative and unwrapped* (``int64``): 0 is the direction's ISN when its
  SYN was seen (so the first data byte is 1, as Wireshark shows it), else the first seen
  sequence number minus one (Wireshark, bug 1542). ``ack`` and SACK edges are relative to the
  *other* direction's ISN, so ``ack`` can be compared directly with the reverse direction's
  ``seq``. Unwrapping follows RFC 1982 serial arithmetic: consecutive values of one direction
  are assumed to be less than 2**31 apart. :class:`Segments` stores them in 32 bits, the
  unwrapped number mod 2**32 (which *is* the number while a direction stays within 2 GiB of
  its ISN); :func:`unwrap` gives back the int64 numbers.
* Absent values use explicit sentinels, never a silent 0: ``-1`` for absent times, frames,
  window scales, MSS and handshake RTTs; :data:`UNKNOWN` for a signed quantity that cannot be
  known (e.g. window headroom when the window scale was not captured).

Example
-------
>>> from tcplens.tcp.model import FAST_RETRANSMISSION, RETRANSMISSION, event_names
>>> event_names(RETRANSMISSION | FAST_RETRANSMISSION)
['retransmission', 'fast_retransmission']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tcplens.capture.table import ACK

U8 = npt.NDArray[np.uint8]
U16 = npt.NDArray[np.uint16]
U32 = npt.NDArray[np.uint32]
I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
B = npt.NDArray[np.bool_]

CLIENT_TO_SERVER = 0
SERVER_TO_CLIENT = 1

#: Sentinel for a signed (``int32``) quantity that cannot be known from the capture.
UNKNOWN = np.iinfo(np.int32).min

#: Wireshark's ``tcp.analysis.*`` expert names (DESIGN.md EVENT). Bit ``i`` of
#: :attr:`Segments.events` is ``EVENT_NAMES[i]``. As in Wireshark, a fast or spurious
#: retransmission also carries ``retransmission``.
EVENT_NAMES: tuple[str, ...] = (
    "retransmission",
    "fast_retransmission",
    "spurious_retransmission",
    "out_of_order",
    "lost_segment",
    "ack_lost_segment",
    "duplicate_ack",
    "zero_window",
    "zero_window_probe",
    "zero_window_probe_ack",
    "window_full",
    "window_update",
    "keep_alive",
    "keep_alive_ack",
)
RETRANSMISSION = 1 << 0
FAST_RETRANSMISSION = 1 << 1
SPURIOUS_RETRANSMISSION = 1 << 2
OUT_OF_ORDER = 1 << 3
LOST_SEGMENT = 1 << 4
ACK_LOST_SEGMENT = 1 << 5
DUPLICATE_ACK = 1 << 6
ZERO_WINDOW = 1 << 7
ZERO_WINDOW_PROBE = 1 << 8
ZERO_WINDOW_PROBE_ACK = 1 << 9
WINDOW_FULL = 1 << 10
WINDOW_UPDATE = 1 << 11
KEEP_ALIVE = 1 << 12
KEEP_ALIVE_ACK = 1 << 13

#: :attr:`Segments.flags` holds the TCP flags (``PacketTable.tcp_flags``: 9 bits, NS as 0x100) in
#: ``TCP_FLAGS`` and, in the free bits above them, what the per-packet pass decided about the
#: segment: one u16 per packet instead of a column each (issue 4: bytes per packet).
TCP_FLAGS = 0x1FF
#: the SACK blocks (0..4) the packet carried (:attr:`Segments.sack_count`), 3 bits from here
SACK_COUNT_SHIFT = 9
#: a data segment carrying sequence space its sender had already sent (:attr:`Segments.resent`)
RESENT_FLAG = 1 << 12

#: RTT sample kinds (:attr:`RttSamples.kind`).
RTT_DATA_ACK = 0  # data segment → the ACK that first covers it (Karn's rule, SACK-aware)
RTT_TIMESTAMP = 1  # first segment carrying a TSval → first reverse segment echoing it (RFC 7323)
RTT_HANDSHAKE_SYN = 2  # SYN → SYN/ACK: the round trip between the capture point and the server
RTT_HANDSHAKE_SYNACK = 3  # SYN/ACK → ACK: the round trip between the capture point and the client
RTT_KIND_NAMES: tuple[str, ...] = ("data_ack", "timestamp", "handshake_syn", "handshake_synack")

#: Where the capture was taken relative to the two ends (:attr:`Flows.vantage`).
VANTAGE_UNKNOWN = 0
VANTAGE_NEAR_CLIENT = 1
VANTAGE_NEAR_SERVER = 2
VANTAGE_MIDDLE = 3
VANTAGE_NAMES: tuple[str, ...] = ("unknown", "near_client", "near_server", "middle")


def event_names(bits: int) -> list[str]:
    """The EVENT names set in one ``events`` bit mask, in :data:`EVENT_NAMES` order."""
    return [name for i, name in enumerate(EVENT_NAMES) if bits >> i & 1]


@dataclass(frozen=True)
class Flows:
    """One row per TCP connection instance (a 5-tuple can hold several, split at a new SYN).

    Rows are in order of each flow's first packet; ``id`` is the 1-based row number.
    """

    id: I64  # 1-based, in order of the flow's first packet (DESIGN.md)
    ip_version: U8  # 4 or 6
    client_addr: U8  # shape (F, 16), IPv4 as IPv4-mapped IPv6 like PacketTable
    client_port: U16
    server_addr: U8  # shape (F, 16)
    server_port: U16
    client_from_syn: B  # the client was identified by its SYN (else: by sending first)
    first_frame: U32
    start_ns: I64  # first packet of the flow
    end_ns: I64  # last packet of the flow
    # end - start without the time the capture's clock steps (capture.clock) inside the flow
    # moved its clock: from its first to its last packet in capture order, less each step
    duration_ns: I64
    # clock steps between the flow's first and last packet (PacketTable.clock_step_rows)
    clock_steps: I64
    # TCP packets of the flow the capture's snaplen cut (status TRUNCATED: their sizes come from
    # the IP header and stand, the bytes beyond the snaplen are not in the file) and the bytes
    # kept of each (the largest captured length among them); 0 when none was cut
    packets_cut: I64
    snaplen: I64
    # Segments the capture missed (Wireshark's ``lost_segment``: a gap in the sequence numbers)
    # and segments captured before the one before them in their direction (the first of each
    # direction not compared), both directions
    packets_missing: I64
    timestamps_backwards: I64
    packets: I64  # TCP packets of the flow, both directions
    packets_c2s: I64
    packets_s2c: I64
    bytes_c2s: I64  # unique TCP payload bytes (highest end - lowest start), client → server
    bytes_s2c: I64
    retransmissions_c2s: I64  # data segments re-sending sequence space (tcp.resent)
    retransmissions_s2c: I64
    # Earliest and latest segment with payload of each direction (min/max: a capture's clock may
    # step back); -1 without data (both directions together: ``data_span_ns``)
    data_first_ns_c2s: I64
    data_first_ns_s2c: I64
    data_last_ns_c2s: I64
    data_last_ns_s2c: I64
    # the first SYN without ACK: the client's first (capture order), else the server's; -1 if none
    first_syn_ns: I64
    syn_ns: I64  # last SYN before the SYN/ACK (the one the server answered), -1 if not seen
    synack_ns: I64  # first SYN/ACK, -1 if not seen
    handshake_ack_ns: I64  # the client's first ACK after the SYN/ACK, -1 if not seen
    handshake_syn_rtt_ns: I64  # SYN → SYN/ACK, -1 if not measurable (RTT_HANDSHAKE_SYN)
    handshake_synack_rtt_ns: I64  # SYN/ACK → ACK, -1 if not measurable (RTT_HANDSHAKE_SYNACK)
    # The path's round trip (client → server → client) from the bulk direction's data → ACK
    # samples plus the capture point's round trip to that sender (tcp.path_rtt); -1 without
    rtt_min_ns: I64
    rtt_median_ns: I64
    rtt_p95_ns: I64  # nearest rank
    # Per direction of data: the round trip from the capture point to that data's receiver and
    # back, as its data → ACK samples measure it (what Wireshark's tcp.analysis.ack_rtt times,
    # from the samples that measure the network: tcp.rtt), smallest and median (the lower
    # middle one); -1 without a sample. Only half of the path where the capture sat at an end.
    data_rtt_min_ns_c2s: I64
    data_rtt_min_ns_s2c: I64
    data_rtt_median_ns_c2s: I64
    data_rtt_median_ns_s2c: I64
    # Shift applied to the windows each side advertises (RFC 7323 §2): 0..14 when the handshake
    # was captured (0 when scaling was not negotiated), -1 when unknown (handshake not captured).
    # Unknown is never silently taken as 0: windows of that side are then left unscaled and
    # every window-derived quantity says UNKNOWN.
    window_scale_client: I8
    window_scale_server: I8
    mss_client: I32  # MSS option of the client's SYN, -1 if absent/not captured
    mss_server: I32  # MSS option of the server's SYN/ACK, -1 if absent/not captured
    sack_permitted: B  # both SYN and SYN/ACK carried SACK-permitted (RFC 2018)
    timestamps: B  # both directions carry the timestamps option (RFC 7323)
    fin_seen: B
    rst_seen: B
    vantage: U8  # VANTAGE_* code: where the capture point sits between client and server
    # ENCAP_* bits (capture.table) of the tunnels its packets came through (its first one's);
    # 0 for none. Its addresses and ports are the innermost ones
    encapsulation: U16

    def __len__(self) -> int:
        return int(self.id.shape[0])

    @property
    def handshake_rtt_ns(self) -> I64:
        """SYN → SYN/ACK → ACK as seen at the capture point, -1 where either half is unknown."""
        both = (self.handshake_syn_rtt_ns >= 0) & (self.handshake_synack_rtt_ns >= 0)
        total: I64 = np.where(both, self.handshake_syn_rtt_ns + self.handshake_synack_rtt_ns, -1)
        return total

    def data_span_ns(self) -> tuple[I64, I64]:
        """The earliest and latest segment with payload of each flow, either direction; -1 (both)
        for a flow without data."""
        last: I64 = np.maximum(self.data_last_ns_c2s, self.data_last_ns_s2c)
        never = np.iinfo(np.int64).max  # a direction without data (-1) is nobody's earliest
        first: I64 = np.minimum(
            np.where(self.data_first_ns_c2s >= 0, self.data_first_ns_c2s, never),
            np.where(self.data_first_ns_s2c >= 0, self.data_first_ns_s2c, never),
        )
        first[last < 0] = -1
        return first, last


@dataclass(frozen=True)
class Segments:
    """Every TCP packet of every flow, sorted by ``(flow, direction, frame)``.

    ``offsets`` (length ``2 * n_flows + 1``) delimits the slices: the packets that
    ``direction`` ``d`` of flow row ``f`` sent are rows ``offsets[2f + d] : offsets[2f + d + 1]``,
    so a row's flow and direction are not stored (:meth:`flow_of`, :meth:`direction_of`).
    Per-packet analysis results (``events``, ``bytes_in_flight``) are columns here too, so a
    slice is everything a time-sequence graph needs (the window headroom is derived on demand:
    :func:`tcplens.tcp.window.window_headroom`).
    """

    offsets: I64
    # n-sized columns use the narrowest type that holds every value, and only what cannot be
    # derived is stored: fresh memory is the main per-packet cost of the analysis (issue 4)
    frame: U32  # 1-based frame number, as Wireshark; the packet's PacketTable row is frame - 1
    time_ns: I64
    # Relative sequence number (see module doc; SYN at 0, first data byte at 1) and ack
    # (relative to the other direction's ISN; meaningful when flags & ACK, 0 without), each
    # mod 2**32: 4 bytes each instead of 8 (issue 4). Exact as they are for a direction within
    # 2 GiB of its ISN; :meth:`unwrapped_seq` / :meth:`unwrapped_ack` give the int64 numbers.
    seq: I32
    payload_len: I32  # TCP payload bytes (from IP lengths, so exact under a snaplen)
    ack: I32
    window: I32  # advertised receive window in bytes, scaled (raw if the scale is unknown);
    # at most 65535 << 14 < 2**31 (RFC 7323 §2.3)
    flags: U16  # TCP flags as in PacketTable.tcp_flags (TCP_FLAGS), plus sack_count, RESENT_FLAG
    # SACK blocks are rare (loss recovery), so only the blocks that exist are stored (RFC 2018):
    # the capture's own entries (``PacketTable.sack_block_*``: one per block, in capture order, a
    # packet's blocks in the order it sent them, edges raw as sent), shared with the packet table,
    # not copied in Segments order (8 bytes a block live during the per-packet pass, issue 4).
    # With the ISNs they give, on demand, each ACK's blocks in Segments order (:meth:`sack_rows`),
    # relative to its ``ack`` (:attr:`sack_left_from_ack`) or to the ISN (:meth:`sack_edges`).
    sack_block_row: U32  # PacketTable row of the packet carrying the block (frame - 1)
    sack_block_left: U32
    sack_block_right: U32
    isn: U32  # (n_flows, 2): Wireshark's base sequence number of the client's, the server's side
    events: U16  # bit set over EVENT_NAMES (Wireshark's tcp.analysis flags: 14 bits)
    # Bytes sent and not yet acknowledged after this data segment left, minus what the
    # receiver reported holding in its last SACK blocks, clipped to the unacknowledged range
    # (Wireshark also subtracts D-SACK blocks below the ACK). -1 if not a data
    # segment or not measurable (e.g. after a capture gap, as Wireshark's valid_bif).
    bytes_in_flight: I32

    def __len__(self) -> int:
        return int(self.frame.shape[0])

    @property
    def n_flows(self) -> int:
        return (int(self.offsets.shape[0]) - 1) // 2

    def slice_of(self, flow: int, direction: int) -> slice:
        """Rows of one direction of one flow (``flow`` is the 0-based row)."""
        k = 2 * flow + direction
        return slice(int(self.offsets[k]), int(self.offsets[k + 1]))

    def flow_of(self, rows: npt.NDArray[np.integer]) -> I32:
        """0-based flow row of each of ``rows`` (a binary search in ``offsets``)."""
        flow: I32 = (self._slice_of_rows(rows) >> 1).astype(np.int32)
        return flow

    def direction_of(self, rows: npt.NDArray[np.integer]) -> U8:
        """Direction of each of ``rows`` (CLIENT_TO_SERVER / SERVER_TO_CLIENT)."""
        direction: U8 = (self._slice_of_rows(rows) & 1).astype(np.uint8)
        return direction

    def flow_column(self) -> I32:
        """The flow row of every row: an n-sized array made on demand (4 bytes per packet)."""
        per_flow = self.offsets[2::2] - self.offsets[0:-1:2]
        flow: I32 = np.repeat(np.arange(self.n_flows, dtype=np.int32), per_flow)
        return flow

    def direction_column(self) -> U8:
        """The direction of every row: an n-sized array made on demand."""
        direction: U8 = np.repeat(
            np.tile(np.array([CLIENT_TO_SERVER, SERVER_TO_CLIENT], np.uint8), self.n_flows),
            np.diff(self.offsets),
        )
        return direction

    def _slice_of_rows(self, rows: npt.NDArray[np.integer]) -> I64:
        """``2 * flow + direction`` of each row: the last slice starting at or before it."""
        k: I64 = np.searchsorted(self.offsets, rows, side="right") - 1
        return k

    @property
    def tcp_flags(self) -> U16:
        """The TCP flags alone (``flags`` without the pass's bits): an array made on demand."""
        tcp: U16 = self.flags & np.uint16(TCP_FLAGS)
        return tcp

    def unwrapped_seq(self) -> I64:
        """Relative sequence numbers as int64 (:func:`unwrap`): an array made on demand."""
        return unwrap(self.seq, self.offsets)

    def unwrapped_ack(self) -> I64:
        """Relative acknowledgment numbers as int64, 0 without the ACK flag (:func:`unwrap` of
        the rows with it): an array made on demand."""
        acked = np.flatnonzero((self.flags & ACK) != 0)
        out: I64 = np.zeros(len(self), np.int64)
        out[acked] = unwrap(self.ack[acked], np.searchsorted(acked, self.offsets))
        return out

    @property
    def sack_count(self) -> U8:
        """0..4 SACK blocks carried by each packet (``flags`` from ``SACK_COUNT_SHIFT``): an
        array made on demand."""
        count: U8 = ((self.flags >> np.uint16(SACK_COUNT_SHIFT)) & np.uint16(7)).astype(np.uint8)
        return count

    @property
    def resent(self) -> B:
        """A data segment carrying sequence space its sender had already sent: tcplens's one
        retransmission count (:func:`tcplens.tcp.resent.resent`); False for segments without
        payload. ``RESENT_FLAG`` of ``flags``, as an array made on demand."""
        again: B = (self.flags & np.uint16(RESENT_FLAG)) != 0
        return again

    def sack_rows(self) -> I32:
        """The row of every SACK block (ascending): each packet with the ACK flag carries
        ``sack_count`` blocks. An array made on demand, like :meth:`flow_column`."""
        blocks = np.where((self.flags & ACK) != 0, self.sack_count, 0)
        rows: I32 = np.repeat(np.arange(len(self), dtype=np.int32), blocks)
        return rows

    @property
    def sack_left_from_ack(self) -> I32:
        """Left edge of every SACK block (rows as :meth:`sack_rows`) relative to its packet's
        ``ack``: the difference of two 32-bit sequence numbers, so exact in int32. Made on
        demand."""
        return self._sack_from_ack()[0]

    @property
    def sack_right_from_ack(self) -> I32:
        """Right edge of every SACK block, as :attr:`sack_left_from_ack`."""
        return self._sack_from_ack()[1]

    def sack_edges(self, unwrapped_ack: I64 | None = None) -> tuple[I64, I64]:
        """Left and right edges of every SACK block, relative to the other direction's ISN
        like ``ack`` (rows as :meth:`sack_rows`); ``unwrapped_ack``: :meth:`unwrapped_ack`,
        if the caller has it already (a pass over every row)."""
        if unwrapped_ack is None:
            unwrapped_ack = self.unwrapped_ack()
        ack = unwrapped_ack[self.sack_rows()]
        left_from_ack, right_from_ack = self._sack_from_ack()
        left: I64 = ack + left_from_ack
        right: I64 = ack + right_from_ack
        return left, right

    def _sack_from_ack(self) -> tuple[I32, I32]:
        """Left and right edges (``sack_block_*``) of the blocks of :meth:`sack_rows`, minus
        the raw ack of their packet, mod 2**32."""
        rows, entries = self._sack_entries()
        ack32 = self.ack[rows].view(np.uint32)  # relative to the peer's ISN, mod 2**32
        peer_isn = self.isn.reshape(-1)[self._slice_of_rows(rows) ^ 1]  # (flow, other side)
        raw_ack = ack32 + peer_isn  # (uint32: wraps, mod 2**32)
        left: I32 = (self.sack_block_left[entries] - raw_ack).view(np.int32)
        right: I32 = (self.sack_block_right[entries] - raw_ack).view(np.int32)
        return left, right

    def _sack_entries(self) -> tuple[I64, I64]:
        """The Segments row of every SACK block of a packet with the ACK flag, ascending and a
        packet's blocks in the order sent (:meth:`sack_rows`), and its ``sack_block_*`` entry."""
        k = self.sack_block_row.shape[0]
        if k == 0 or len(self) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        # Segments row of each PacketTable row (-1: a packet not in Segments)
        size = max(int(self.frame.max()), int(self.sack_block_row.max()) + 1)
        at = np.full(size, -1, np.int64)
        at[self.frame.astype(np.int64) - 1] = np.arange(len(self))
        row = at[self.sack_block_row]
        kept = np.flatnonzero(row >= 0)
        kept = kept[(self.flags[row[kept]] & ACK) != 0]
        entries: I64 = kept[np.argsort(row[kept], kind="stable")]  # (stable: order sent)
        rows: I64 = row[entries]
        return rows, entries

    @property
    def end_seq(self) -> I64:
        """Sequence number after the segment: payload plus one for SYN and FIN (RFC 9293)."""
        syn_or_fin = ((self.flags & 0x03) != 0).astype(np.int64)
        end: I64 = self.unwrapped_seq() + self.payload_len.astype(np.int64) + syn_or_fin
        return end


def unwrap(low: I32, offsets: I64) -> I64:
    """The int64 numbers of each slice ``offsets[k] : offsets[k + 1]`` of ``low`` (their low 32
    bits): from 0, each step to the next as a signed 32-bit difference (RFC 1982), the running
    sum the per-packet pass itself keeps (:mod:`tcplens.tcp.events`), so exact; a slice's first
    number is its own step from 0.

    >>> unwrap(np.array([1, 2**31 - 1, -2**31 + 9, 5], np.int32), np.array([0, 3, 4])).tolist()
    [1, 2147483647, 2147483657, 5]
    """
    n = low.shape[0]
    if n == 0:
        return np.zeros(0, np.int64)
    step = np.empty(n, np.int32)
    step[0] = low[0]
    np.subtract(low[1:], low[:-1], out=step[1:])  # int32: wraps, i.e. mod 2**32, signed
    first = offsets[:-1][offsets[:-1] < offsets[1:]]  # the slices' first rows (non-empty ones)
    step[first] = low[first]
    total: I64 = np.cumsum(step, dtype=np.int64)
    # each slice from 0: minus the sum of the slices before it
    before = total[first] - low[first]
    total -= np.repeat(before, np.diff(np.append(first, n)))
    return total


@dataclass(frozen=True)
class RttSamples:
    """Round-trip time samples of all flows, sorted by flow, then by the completing packet's
    frame (kinds in :data:`RTT_KIND_NAMES` order on the same packet).

    ``offsets`` (length ``n_flows + 1``) delimits each flow's samples: flow row ``f``'s are rows
    ``offsets[f] : offsets[f + 1]``, so a row's flow is not stored (:meth:`flow_column`).
    """

    offsets: I64
    direction: U8  # direction of the data (or SYN / TSval) being timed
    kind: U8  # RTT_* code
    rtt_ns: I64
    row: I32  # Segments row of the acknowledging / echoing packet
    sent_row: I32  # Segments row of the packet being timed
    # the Segments columns the rows point into (the same arrays, not copies): a sample's frames
    # and time are read through its rows, not stored again (8 bytes a sample fewer to write,
    # issue 4; the diagnosis reads the times of the flows it labels only)
    segment_time_ns: I64
    segment_frame: U32

    def __len__(self) -> int:
        return int(self.rtt_ns.shape[0])

    @property
    def time_ns(self) -> I64:
        """When each sample completed (the acknowledging / echoing packet): n-sized, on demand."""
        time: I64 = self.segment_time_ns[self.row]
        return time

    @property
    def frame(self) -> U32:
        """The acknowledging / echoing frame of each sample: n-sized, on demand."""
        frame: U32 = self.segment_frame[self.row]
        return frame

    @property
    def sent_frame(self) -> U32:
        """The frame each sample times: n-sized, on demand."""
        frame: U32 = self.segment_frame[self.sent_row]
        return frame

    def flow_column(self) -> I32:
        """The flow row of every sample: an n-sized array made on demand (4 bytes per sample)."""
        flow: I32 = np.repeat(
            np.arange(self.offsets.shape[0] - 1, dtype=np.int32), np.diff(self.offsets)
        )
        return flow


@dataclass(frozen=True)
class ZeroWindowSpans:
    """Time during which one side advertised a zero receive window (RFC 9293 §3.8.6.1)."""

    flow: I32
    direction: U8  # direction of the packets advertising zero (the stalled receiver's side)
    start_ns: I64  # first zero-window advertisement
    end_ns: I64  # first non-zero advertisement after it, or the side's last packet
    start_frame: U32
    end_frame: U32
    reopened: B  # a non-zero window followed (False: the flow ended still closed)

    def __len__(self) -> int:
        return int(self.flow.shape[0])


@dataclass(frozen=True)
class IdleGaps:
    """Intervals in which a flow carried no packet in either direction.

    A gap counts when it exceeds both :data:`IDLE_GAP_MIN_NS` and ``IDLE_GAP_RTTS`` times the
    flow's median RTT, so a round trip of waiting for an ACK is not "idle".
    """

    flow: I32
    start_ns: I64  # time of the packet before the gap
    end_ns: I64  # time of the packet after the gap
    start_frame: U32
    end_frame: U32

    def __len__(self) -> int:
        return int(self.flow.shape[0])


IDLE_GAP_MIN_NS = 200_000_000
IDLE_GAP_RTTS = 2.0


@dataclass(frozen=True)
class ClockSteps:
    """The capture's clock steps (``capture.clock``), in capture order: the frame of the packet
    after each step, its time, and how far the step moved the clock from the packet before it
    (ns, negative: back). The time across a step is unknown: no duration counts it."""

    frames: I64
    at_ns: I64
    moved_ns: I64

    def inside(self, first_frame: I64, last_frame: I64) -> tuple[I64, I64]:
        """Per span of frames, the steps after its first frame up to its last: rows ``lo`` up
        to ``hi`` (not included) of these columns."""
        lo = np.searchsorted(self.frames, first_frame, side="right")
        hi = np.searchsorted(self.frames, last_frame, side="right")
        return lo, hi


@dataclass(frozen=True)
class TcpAnalysis:
    """Everything the TCP analysis derives from one capture's packet table."""

    capture_start_ns: int  # the capture's first packet (origin of the JSON ``*_s`` numbers)
    flows: Flows
    segments: Segments
    rtt: RttSamples
    zero_windows: ZeroWindowSpans
    idle_gaps: IdleGaps
    clock_steps: ClockSteps
