"""The columnar packet table: one row per captured packet, one numpy array per field.

This is the contract between the reader (``tcplens.capture``) and the TCP analysis
(``tcplens.tcp``). Every array has length ``n`` (the number of packets in the file,
including packets that are not TCP), except ``handshake_*``, ``sack_block_*``, ``long_*``,
``tunnel_*`` and ``clock_step_rows``, one entry per packet carrying a SYN option, per SACK
block, per packet with a length of 64 KiB or more, per packet that came through a tunnel or
per clock step (see ``PacketTable``), and ``addresses``, one row per distinct IP address,
which ``src_id``/``dst_id`` index.

Absent values use explicit sentinels, never a silent 0 that could be a real value:
``mss == -1``, ``wscale == -1`` (option absent), no ``OPTION_TIMESTAMPS`` bit.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

# status bit flags (``PacketTable.status``)
PARSED = np.uint8(1)  # link + network + transport headers decoded
TRUNCATED = np.uint8(2)  # captured < what the headers say (snaplen); payload sizes still exact
FRAGMENT = np.uint8(4)  # IP fragment: only the first is parsed, later ones never as TCP
NOT_TCP = np.uint8(8)  # not a TCP segment (UDP, ARP, ICMP, other link type, ...)
MALFORMED = np.uint8(16)  # headers inconsistent (bad lengths): counted, not analysed
UNSUPPORTED_LINK = np.uint8(32)  # link type we do not decode: counted and skipped
COPY = np.uint8(
    64
)  # a TCP packet captured twice: the later copy, counted and not analysed (``capture.copies``)

# encapsulation bits (``PacketTable.tunnel_layers``): the headers crossed to reach the innermost
# IP header, named as in ``ENCAPSULATION_NAMES`` (the flow's ``encapsulation``)
ENCAP_VLAN = 1 << 0  # IEEE 802.1Q / 802.1ad tags
ENCAP_MPLS = 1 << 1  # RFC 3032
ENCAP_PPPOE = 1 << 2  # RFC 2516
ENCAP_GRE = 1 << 3  # RFC 2784, RFC 2890 (keys, sequence numbers), RFC 2637 (PPTP)
ENCAP_ERSPAN = 1 << 4  # Cisco ERSPAN type I, II, III in GRE
ENCAP_WLAN = 1 << 5  # IEEE 802.11 data frames (Aruba's GRE)
ENCAP_IPIP = 1 << 6  # IPv4 in IPv4 (RFC 2003)
ENCAP_6IN4 = 1 << 7  # IPv6 in IPv4 (RFC 4213)
ENCAP_4IN6 = 1 << 8  # IPv4 in IPv6 (RFC 2473)
ENCAP_6IN6 = 1 << 9  # IPv6 in IPv6 (RFC 2473)
ENCAP_VXLAN = 1 << 10  # RFC 7348
ENCAP_GENEVE = 1 << 11  # RFC 8926
ENCAP_GTPU = 1 << 12  # 3GPP TS 29.281
ENCAPSULATION_NAMES = (
    "VLAN", "MPLS", "PPPoE", "GRE", "ERSPAN", "802.11", "IPIP", "6in4", "4in6", "6in6",
    "VXLAN", "Geneve", "GTP-U",
)  # fmt: skip


def encapsulation_text(layers: int) -> str | None:
    """The ``ENCAP_*`` bits as the flow's ``encapsulation``: names joined by ``+``, outermost
    kinds first; None for none.

    >>> encapsulation_text(ENCAP_VLAN | ENCAP_PPPOE)
    'VLAN+PPPoE'
    """
    names = [name for i, name in enumerate(ENCAPSULATION_NAMES) if layers >> i & 1]
    return "+".join(names) or None


# TCP flag bits (``PacketTable.tcp_flags``), RFC 9293 §3.1 plus RFC 3168 ECE/CWR
FIN = 0x01
SYN = 0x02
RST = 0x04
PSH = 0x08
ACK = 0x10
URG = 0x20
ECE = 0x40
CWR = 0x80

MAX_SACK_BLOCKS = 4  # RFC 2018: at most 4 blocks fit in 40 option bytes
# ``PacketTable.tcp_options``: the options a TCP segment carries that the analysis reads per
# packet, in one byte (one load instead of two, one byte written a packet instead of two)
OPTION_SACK_BLOCKS = 0x07  # bits 0-2: how many SACK blocks (0..MAX_SACK_BLOCKS, RFC 2018 §3)
OPTION_TIMESTAMPS = 0x08  # the timestamps option is present (RFC 7323 §3)
# a length column holding this sends the reader to the packet's ``long_*`` entry: 2 bytes a
# packet instead of 4, for lengths that are almost never this long (the analysis reads only the
# payload's, from its entry when the column holds this)
LONG_LENGTH = 0xFFFF

# The dense columns by the step of the TCP analysis that reads them last (``tcp.analyze``):
# the reader maps each group as one block (``capture.columns``), so where the analysis consumes
# the table (``PacketTable.release``) a whole block comes free at once for its next arrays.
# The flow assignment (the endpoints: read there, once per flow) and the timestamp pairs, found
# right after it (``tcp.timestamps``): the per-packet pass's Segments columns take this block
DONE_AFTER_FLOWS = (
    "interface", "link_type", "caplen16", "origlen16", "status", "ip_version", "src_id",
    "dst_id", "ip_proto", "src_port", "dst_port", "tcp_hdr_len", "ts_val", "ts_ecr", "ip_id",
    "tcp_checksum",
)  # fmt: skip
DONE_AFTER_EVENTS = (  # the per-packet state machine (``flow_events``); the RTT samples' block
    "ts_ns", "tcp_seq", "tcp_ack", "tcp_flags", "tcp_window", "tcp_payload_len16", "tcp_options",
)  # fmt: skip


# name, dtype; every row is written by the walker or the decoder (in blocks: see ``columns.allocate_columns``)
LAYOUT: tuple[tuple[str, type], ...] = (
    ("ts_ns", np.int64),
    ("interface", np.uint16),
    ("link_type", np.uint16),
    ("caplen16", np.uint16),
    ("origlen16", np.uint16),
    ("status", np.uint8),
    ("ip_version", np.uint8),
    ("src_id", np.uint32),
    ("dst_id", np.uint32),
    ("ip_proto", np.uint8),
    ("src_port", np.uint16),
    ("dst_port", np.uint16),
    ("tcp_seq", np.uint32),
    ("tcp_ack", np.uint32),
    ("tcp_flags", np.uint16),
    ("tcp_window", np.uint16),
    ("tcp_hdr_len", np.uint8),
    ("tcp_payload_len16", np.uint16),
    ("tcp_options", np.uint8),
    ("ts_val", np.uint32),
    ("ts_ecr", np.uint32),
    ("ip_id", np.uint16),
    ("tcp_checksum", np.uint16),
)
PER_INTERFACE = ("interface", "link_type")  # a pcap's are one value (``reader._Reading._table``)


def dense_layout(pcap: bool) -> list[tuple[str, type]]:
    """The dense columns of a table (``columns.allocate_columns``): a pcap has no per-interface ones."""
    return [(name, dtype) for name, dtype in LAYOUT if not (pcap and name in PER_INTERFACE)]


def dense_row_bytes(*, pcap: bool) -> int:
    """Bytes a packet takes in the dense columns."""
    return sum(np.dtype(dtype).itemsize for _, dtype in dense_layout(pcap))


class ReleasedColumnError(RuntimeError):
    """A PacketTable column was read after the table handed it over (``PacketTable.release``)."""


U8 = npt.NDArray[np.uint8]
U16 = npt.NDArray[np.uint16]
U32 = npt.NDArray[np.uint32]
I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class PacketTable:
    """Packets of one capture as columns. Row ``i`` is frame ``i + 1`` (Wireshark's numbering).

    Options that few packets carry are stored for those packets only, in row order: the options
    of a SYN (MSS, window scale, SACK-permitted: RFC 9293 §3.7.1, RFC 7323 §2.2, RFC 2018 §2) in
    ``handshake_*``, one entry per packet carrying any of them; SACK blocks (RFC 2018 §3) in
    ``sack_block_*``, one entry per block. The captured and wire lengths are 16-bit columns
    (``caplen16``, ``origlen16``): a packet with either ≥ ``LONG_LENGTH`` (TSO/GRO frames,
    jumbograms) holds ``LONG_LENGTH`` there and both lengths in ``long_*``. So does the TCP
    payload length (``tcp_payload_len16``, ``long_payload``), which only such a frame can make
    ≥ ``LONG_LENGTH`` (an IP length is 16 bits; TSO frames have none). Per-packet views of them
    (``caplen``, ``tcp_payload_len``, ``mss``, ``sack_left``, ...) are built on demand, for
    tests and tools: the analysis reads the compact columns.
    """

    ts_ns: I64  # absolute timestamp, ns since the Unix epoch (if_tsoffset applied)
    # pcapng interface id (0 for pcap), and LINKTYPE_* of the interface: a pcap has one of each,
    # so there both are read-only broadcast views of one value (no memory per packet)
    interface: U16
    link_type: U16
    caplen16: U16  # bytes captured (``LONG_LENGTH``: see ``long_caplen``)
    origlen16: U16  # bytes on the wire
    status: U8  # bit set of PARSED, TRUNCATED, FRAGMENT, NOT_TCP, MALFORMED, UNSUPPORTED_LINK, COPY
    ip_version: U8  # 0 (none), 4 or 6
    src_id: U32  # row of ``addresses``; equal ids, equal addresses; 0 is :: (no IP header)
    dst_id: U32
    ip_proto: U8  # IP protocol number of the transport header (6 TCP, 17 UDP), 0 if none
    src_port: U16
    dst_port: U16
    tcp_seq: U32
    tcp_ack: U32
    tcp_flags: U16  # FIN..CWR (+ NS as 0x100)
    tcp_window: U16  # raw window field, unscaled
    tcp_hdr_len: U8  # TCP header length in bytes
    tcp_payload_len16: U16  # from the IP length, not the captured length (see ``long_payload``)
    tcp_options: U8  # OPTION_SACK_BLOCKS: how many SACK blocks (0..4); OPTION_TIMESTAMPS
    ts_val: U32
    ts_ecr: U32
    # what tells a packet captured twice from a resent one (``capture.copies``): the innermost
    # IPv4 header's identification (0 for IPv6, which has none) and the TCP checksum as sent
    ip_id: U16
    tcp_checksum: U16
    # the packets carrying MSS, window scale or SACK-permitted (rows ascending), and those options
    handshake_rows: U32
    handshake_mss: I32  # MSS option, -1 if absent
    handshake_wscale: I8  # window-scale shift option, -1 if absent
    handshake_sack_perm: B  # SACK-permitted option present
    # one entry per SACK block: the packet's row (ascending; a packet's ``sack_count`` blocks are
    # consecutive, in option order) and the block's edges as sent (raw sequence numbers)
    sack_block_row: U32
    sack_block_left: U32
    sack_block_right: U32
    # the packets with a length ≥ LONG_LENGTH (rows ascending), their two lengths in full and
    # their TCP payload length in full (0 if not TCP)
    long_rows: U32
    long_caplen: U32
    long_origlen: U32
    long_payload: U32
    # the packets that came through a tunnel (rows ascending; see ``capture.tunnels``) and the
    # ``ENCAP_*`` bits of the headers crossed (their addresses and ports are the innermost ones)
    tunnel_rows: U32
    tunnel_layers: U16
    # the rows whose timestamp steps from the previous row's by a clock jump (rows ascending, see
    # ``capture.clock``): no time difference across one of them is a duration
    clock_step_rows: U32
    # shape (k, 16), one row per distinct address, in order of first appearance: IPv6, or IPv4
    # as IPv4-mapped IPv6 (::ffff:a.b.c.d); row 0 is :: (see ``capture.addresses``)
    addresses: U8

    def __len__(self) -> int:
        released = self.__dict__.get("_released")
        return int(self.ts_ns.shape[0]) if released is None else released[0]

    def release(self, names: Iterable[str]) -> None:
        """Hand the columns ``names`` over for good: the table forgets them, and reading one
        through it from now on raises ``ReleasedColumnError``.

        For the one owner that consumes the table: ``tcp.analyze.analyze_tcp(consume=True)``,
        on the path of ``report.analyse_capture(consume_packets=True)`` (the CLI, the web
        worker). Each column's memory is offered for recycling (``capture.memory.recycling``):
        it is reused only once no array anywhere views it any more, so a caller that still
        holds a column (or a view of it) keeps its data.
        """
        from tcplens.capture.memory import recycle_when_dead

        count, gone = self.__dict__.get("_released") or (len(self), frozenset())
        names = tuple(names)
        for name in names:
            column = getattr(self, name)
            recycle_when_dead(column)
            object.__delattr__(self, name)
            del column  # the last reference, unless a caller holds one
        object.__setattr__(self, "_released", (count, gone | frozenset(names)))

    if not TYPE_CHECKING:  # (mypy would then take any attribute name as a column)

        def __getattr__(self, name: str) -> Any:
            released = self.__dict__.get("_released")
            if released is not None and name in released[1]:
                raise ReleasedColumnError(
                    f"PacketTable.{name} was handed over to the analysis that consumed the "
                    "table (PacketTable.release): read the capture again to see its packets"
                )
            raise AttributeError(f"'PacketTable' object has no attribute {name!r}")

    @property
    def frame(self) -> U32:
        """1-based position of each packet in the file, as Wireshark numbers frames (row + 1)."""
        return np.arange(1, len(self) + 1, dtype=np.uint32)

    @property
    def caplen(self) -> U32:
        """Per packet: bytes captured (n-sized, built on each call)."""
        return self._length(self.caplen16, self.long_caplen)

    @property
    def origlen(self) -> U32:
        """Per packet: bytes on the wire (built on each call)."""
        return self._length(self.origlen16, self.long_origlen)

    @property
    def tcp_payload_len(self) -> U32:
        """Per packet: TCP payload bytes (built on each call)."""
        return self._length(self.tcp_payload_len16, self.long_payload)

    @property
    def sack_count(self) -> U8:
        """Per packet: how many SACK blocks it carries (0..4; built on each call)."""
        return self.tcp_options & np.uint8(OPTION_SACK_BLOCKS)

    @property
    def has_ts(self) -> B:
        """Per packet: the timestamps option is present (built on each call)."""
        present: B = (self.tcp_options & np.uint8(OPTION_TIMESTAMPS)) != 0
        return present

    @property
    def mss(self) -> I32:
        """Per packet: the MSS option, -1 if absent (n-sized, built on each call)."""
        return self._per_packet(self.handshake_mss, np.int32(-1))

    @property
    def wscale(self) -> I8:
        """Per packet: the window-scale shift option, -1 if absent (built on each call)."""
        return self._per_packet(self.handshake_wscale, np.int8(-1))

    @property
    def sack_perm(self) -> B:
        """Per packet: SACK-permitted option present (built on each call)."""
        return self._per_packet(self.handshake_sack_perm, np.bool_(False))

    @property
    def sack_left(self) -> U32:
        """Per packet, shape (n, MAX_SACK_BLOCKS): left edges of its blocks, 0 where none."""
        return self._blocks(self.sack_block_left)

    @property
    def sack_right(self) -> U32:
        """Per packet, shape (n, MAX_SACK_BLOCKS): right edges of its blocks, 0 where none."""
        return self._blocks(self.sack_block_right)

    def _length(self, short: U16, long: U32) -> U32:
        out = short.astype(np.uint32)
        out[self.long_rows] = long
        return out

    def _per_packet(self, values: npt.NDArray[Any], absent: Any) -> npt.NDArray[Any]:
        out = np.full(len(self), absent, values.dtype)
        out[self.handshake_rows] = values
        return out

    def _blocks(self, edges: U32) -> U32:
        rows = self.sack_block_row.astype(np.int64)
        first = np.searchsorted(rows, rows, side="left")  # each block's place in its packet
        out = np.zeros((len(self), MAX_SACK_BLOCKS), np.uint32)
        out[rows, np.arange(rows.shape[0]) - first] = edges
        return out


@dataclass(frozen=True)
class DnsTable:
    """DNS messages over UDP port 53 (few per capture, so names are Python strings)."""

    packet_index: I64  # row in the PacketTable
    ts_ns: I64  # the packet's time (as ``PacketTable.ts_ns``)
    src_id: U32  # the packet's source (a row of ``PacketTable.addresses``)
    dns_id: U16
    is_response: B
    rcode: U8
    qtype: U16  # type of the first question (1 A, 28 AAAA, 12 PTR, ...)
    qname: npt.NDArray[np.object_]  # first question name, dotted, without the trailing dot
    answer_addrs: tuple[tuple[str, ...], ...] = field(default=())  # A/AAAA answers, textual


@dataclass(frozen=True)
class CaptureInfo:
    """Capture-level facts, as in DESIGN.md's ``capture`` object."""

    format: str  # "pcap" | "pcapng"
    compression: str | None  # None | "gzip" | "zstd"
    packets: int
    link_types: tuple[int, ...]
    first_ts_ns: int | None
    last_ts_ns: int | None
    truncated: bool  # the file ends inside a record
    warnings: tuple[str, ...]
    comments: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        if self.first_ts_ns is None or self.last_ts_ns is None:
            return 0.0
        return (self.last_ts_ns - self.first_ts_ns) / 1e9


@dataclass(frozen=True)
class Capture:
    """A read capture: its packets, its DNS messages and its facts."""

    packets: PacketTable
    dns: DnsTable
    info: CaptureInfo


def address_text(addr16: npt.NDArray[np.uint8]) -> str:
    """Text of a ``src_addr``/``dst_addr`` row: dotted IPv4 for IPv4-mapped rows, else IPv6.

    >>> address_text(np.array([0] * 10 + [255, 255, 10, 0, 0, 1], np.uint8))
    '10.0.0.1'
    """
    ip = ipaddress.IPv6Address(bytes(addr16))
    return str(ip.ipv4_mapped) if ip.ipv4_mapped is not None else ip.compressed


def endpoint_text(addr16: npt.NDArray[np.uint8], port: int) -> str:
    """``ip:port`` for IPv4 and ``[ip]:port`` for IPv6 (RFC 3986 §3.2.2 brackets).

    >>> endpoint_text(np.array([0] * 15 + [1], np.uint8), 443)
    '[::1]:443'
    """
    text = address_text(addr16)
    return f"[{text}]:{port}" if ":" in text else f"{text}:{port}"
