"""Packets captured twice (issue 27 part 3): the later copy is recognised, counted in one
warning and left out of the TCP analysis; resends are not copies."""

from __future__ import annotations

import io
import struct

import numpy as np

from tcplens.capture import read_capture
from tcplens.capture.copies import COPY_WINDOW_NS, PART_ROWS
from tcplens.capture.table import ACK, COPY, PSH, SYN, Capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import EVENT_NAMES
from tests.capture.builders import Packet, ethernet, ipv4, ipv6, pcap_file, tcp, udp

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
C, S = "10.1.0.1", "10.2.0.2"


def _up(ident: int, seq: int, ack: int, flags: int, data: bytes = b"", check: int = 0) -> bytes:
    segment = bytearray(tcp(40000, 80, seq, ack, flags, 64000, payload=data))
    segment[16:18] = struct.pack("!H", check)
    return ipv4(C, S, 6, bytes(segment), ident=ident)


def _down(ident: int, seq: int, ack: int, flags: int, data: bytes = b"") -> bytes:
    return ipv4(S, C, 6, tcp(80, 40000, seq, ack, flags, 64000, payload=data), ident=ident)


def _connection() -> list[bytes]:
    """Handshake, 300 bytes up, 1000 down, each packet its own IP identification."""
    return [
        _up(11, 100, 0, SYN),
        _down(21, 500, 101, SYN | ACK),
        _up(12, 101, 501, ACK),
        _up(13, 101, 501, ACK | PSH, b"u" * 300),
        _down(22, 501, 401, ACK | PSH, b"d" * 1000),
        _up(14, 401, 1501, ACK),
    ]


def _vxlan(inner: bytes) -> bytes:
    header = struct.pack("!II", 0x08000000, 4242 << 8)
    return ethernet(
        ipv4("192.0.2.1", "192.0.2.2", 17, udp(51234, 4789, header + ethernet(inner)), ident=9)
    )


def _read(frames: list[tuple[int, bytes]]) -> Capture:
    packets = [Packet(T0 + t, frame) for t, frame in frames]
    return read_capture(io.BytesIO(pcap_file(packets)))


def _events(capture: Capture) -> dict[int, list[str]]:
    seg = analyze_tcp(capture.packets).segments
    return {
        int(f): [k for i, k in enumerate(EVENT_NAMES) if e >> i & 1]
        for f, e in zip(seg.frame, seg.events, strict=True)
        if e
    }


def test_the_ip_identification_and_tcp_checksum_are_columns() -> None:
    frames = [(0, ethernet(_up(0x1234, 1, 0, SYN, check=0xBEEF)))]  # the Ethernet fast path
    frames += [(MS, ethernet(_up(0x4321, 1, 0, SYN, check=0xCAFE), vlans=(0x8100,)))]
    frames += [(2 * MS, _vxlan(_up(0x5678, 1, 0, SYN, check=0xF00D)))]  # the inner header's
    v6 = bytearray(tcp(40000, 80, 1, 0, SYN, 64000))
    v6[16:18] = b"\xab\xcd"
    frames += [(3 * MS, ethernet(ipv6("2001:db8::1", "2001:db8::2", 6, bytes(v6)), 0x86DD))]
    table = _read(frames).packets
    assert table.ip_id.tolist() == [0x1234, 0x4321, 0x5678, 0]
    assert table.tcp_checksum.tolist() == [0xBEEF, 0xCAFE, 0xF00D, 0xABCD]


def test_every_packet_captured_tunnelled_and_bare_is_analysed_once() -> None:
    """As zeek's vxlan-overlapping-http-get: each packet bare, then the same in VXLAN, 10 µs
    later. Wireshark calls each second copy a retransmission or a duplicate ACK."""
    frames = []
    for i, packet in enumerate(_connection()):
        frames += [(i * 10 * MS, ethernet(packet)), (i * 10 * MS + 10_000, _vxlan(packet))]
    capture = _read(frames)
    assert capture.info.warnings == (
        "Every TCP packet appears 2× (captured on several interfaces?): the 6 copies "
        "(frames 2, 4, 6, 8, 10, …) are left out of the analysis.",
    )
    copies = (capture.packets.status & COPY) != 0
    assert np.flatnonzero(copies).tolist() == [1, 3, 5, 7, 9, 11]
    analysis = analyze_tcp(capture.packets)
    flows = analysis.flows
    assert (len(flows), int(flows.packets[0])) == (1, 6)
    assert (int(flows.bytes_c2s[0]), int(flows.bytes_s2c[0])) == (300, 1000)
    assert flows.retransmissions_c2s.tolist() == flows.retransmissions_s2c.tolist() == [0]
    assert _events(capture) == {}
    # the data → ACK samples time the first copies: 10 ms each (frames 1 → 3, 7 → 9, 9 → 11)
    rtt = analysis.rtt
    assert sorted(set(rtt.rtt_ns.tolist())) == [10 * MS]


def test_a_few_copies_are_counted_with_their_frames() -> None:
    packets = _connection()
    frames = [(i * 10 * MS, ethernet(p)) for i, p in enumerate(packets)]
    frames.insert(4, (30 * MS + 5_000, ethernet(packets[3])))  # data up, captured twice
    frames.append((50 * MS + 7_000, ethernet(packets[5])))  # the last ACK, twice
    capture = _read(frames)
    assert capture.info.warnings == (
        "2 TCP packets were captured twice (frames 5, 8: each the same bytes as a packet just "
        "before it, same IP identification and TCP checksum); the copies are left out of the "
        "analysis.",
    )
    assert _events(capture) == {}


def test_a_resend_is_no_copy() -> None:
    """The same segment sent again carries a new IP identification (RFC 6864 §4.1: Linux
    numbers each packet of a connection): a retransmission, whenever it comes."""
    packets = _connection()[:4]
    frames = [(i * 10 * MS, ethernet(p)) for i, p in enumerate(packets)]
    frames.append((30 * MS + 5_000, ethernet(_up(99, 101, 501, ACK | PSH, b"u" * 300))))
    capture = _read(frames)
    assert capture.info.warnings == ()
    assert _events(capture) == {5: ["retransmission"]}


def test_identification_0_tells_nothing() -> None:
    """RFC 6864 §4.1 lets a source send 0 in every atomic datagram (the real-world corpus has
    resends with identification 0, checksum and all fields equal, 50 ms apart)."""
    frames = [(0, ethernet(_up(0, 100, 0, SYN))), (5_000, ethernet(_up(0, 100, 0, SYN)))]
    capture = _read(frames)
    assert capture.info.warnings == ()
    assert _events(capture) == {2: ["retransmission"]}


def test_copies_further_apart_than_the_window_are_resends() -> None:
    syn = ethernet(_up(7, 100, 0, SYN))
    capture = _read([(0, syn), (COPY_WINDOW_NS + 1000, syn)])  # (microseconds)
    assert capture.info.warnings == ()
    assert _events(capture) == {2: ["retransmission"]}
    assert _read([(0, syn), (COPY_WINDOW_NS, syn)]).info.warnings[0].startswith("Every TCP")


def test_ipv6_copies_are_told_by_the_tcp_checksum() -> None:
    def syn(check: int) -> bytes:
        segment = bytearray(tcp(40000, 80, 100, 0, SYN, 64000))
        segment[16:18] = struct.pack("!H", check)
        return ethernet(ipv6("2001:db8::1", "2001:db8::2", 6, bytes(segment)), 0x86DD)

    copied = _read([(0, syn(0x1111)), (3 * MS, syn(0x1111)), (6 * MS, syn(0x2222))])
    assert ((copied.packets.status & COPY) != 0).tolist() == [False, True, False]
    assert _events(copied) == {3: ["retransmission"]}


def test_copies_are_found_across_the_parts_marked_on_each_core() -> None:
    """The rows are marked in parts of PART_ROWS, each with its own table of recent packets
    seeded with the rows before it: an original before a part's first row is found as one
    inside it, and a row before the part is not marked twice."""
    n = PART_ROWS + 200
    base = bytearray(ethernet(_up(1, 0, 0, SYN)))
    frames = []
    for i in range(n):  # each its own sequence number and identification: no copies
        frame = bytearray(base)
        struct.pack_into("!H", frame, 14 + 4, 1 + i % 60_000)
        struct.pack_into("!I", frame, 14 + 20 + 4, i)
        frames.append(bytes(frame))
    for copy, original in (
        (101, 100),
        (PART_ROWS, PART_ROWS - 1),
        (PART_ROWS + 10, PART_ROWS - 100),
    ):
        frames[copy] = frames[original]
    capture = _read([(10_000 * i, frame) for i, frame in enumerate(frames)])  # 10 µs apart
    copies = np.flatnonzero((capture.packets.status & COPY) != 0)
    assert copies.tolist() == [101, PART_ROWS, PART_ROWS + 10]
    assert capture.info.warnings == (
        f"3 TCP packets were captured twice (frames 102, {PART_ROWS + 1}, {PART_ROWS + 11}: "
        "each the same bytes as a packet just before it, same IP identification and TCP "
        "checksum); the copies are left out of the analysis.",
    )
