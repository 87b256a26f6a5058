"""Link layers: where IP starts in Ethernet (with VLAN tags), Linux cooked, raw IP and loopback."""

from __future__ import annotations

import io
import struct

import pytest

from tcplens.capture import read_capture
from tcplens.capture.table import NOT_TCP, PARSED, SYN, TRUNCATED, UNSUPPORTED_LINK
from tests.capture.builders import Packet, ethernet, ipv4, ipv6, pcap_file, tcp

SEGMENT = tcp(1234, 80, 42, 0, SYN, 1000)
V4 = ipv4("198.51.100.1", "198.51.100.2", 6, SEGMENT)
V6 = ipv6("2001:db8::a", "2001:db8::b", 6, SEGMENT)


def _sll(packet: bytes, protocol: int, hatype: int = 1) -> bytes:
    return struct.pack("!HHH8sH", 0, hatype, 6, b"\x02" * 8, protocol) + packet


def _sll2(packet: bytes, protocol: int, hatype: int = 1) -> bytes:
    return struct.pack("!HHIHBB8s", protocol, 0, 2, hatype, 0, 6, b"\x02" * 8) + packet


CASES = {
    "ethernet": (1, ethernet(V4), 4),
    "ethernet-ipv6": (1, ethernet(V6, 0x86DD), 6),
    "802.1q": (1, ethernet(V4, vlans=(0x8100,)), 4),
    "qinq-88a8": (1, ethernet(V4, vlans=(0x88A8, 0x8100)), 4),
    "qinq-9100": (1, ethernet(V6, 0x86DD, vlans=(0x9100, 0x8100)), 6),
    "sll": (113, _sll(V4, 0x0800), 4),
    "sll-ipv6": (113, _sll(V6, 0x86DD), 6),
    "sll2": (276, _sll2(V4, 0x0800), 4),
    "raw-101-v4": (101, V4, 4),
    "raw-101-v6": (101, V6, 6),
    "ipv4-228": (228, V4, 4),
    "ipv6-229": (229, V6, 6),
    "null-little-endian": (0, struct.pack("<I", 2) + V4, 4),
    "null-big-endian": (0, struct.pack(">I", 2) + V4, 4),
    "null-freebsd-ipv6": (0, struct.pack("<I", 28) + V6, 6),
    "null-darwin-ipv6": (0, struct.pack("<I", 30) + V6, 6),
    "loop": (108, struct.pack(">I", 24) + V6, 6),
}


@pytest.mark.parametrize(("link_type", "frame", "version"), CASES.values(), ids=CASES.keys())
def test_tcp_found_behind_each_link_type(link_type: int, frame: bytes, version: int) -> None:
    capture = read_capture(io.BytesIO(pcap_file([Packet(0, frame)], link_type=link_type)))
    table = capture.packets
    assert table.status.tolist() == [PARSED]
    assert table.ip_version.tolist() == [version]
    assert (table.src_port[0], table.dst_port[0], table.tcp_seq[0]) == (1234, 80, 42)
    assert table.link_type.tolist() == [link_type]


@pytest.mark.parametrize(
    ("link_type", "frame"),
    [
        (1, ethernet(b"\x00" * 28, 0x0806)),
        (113, _sll(V4, 0x0800, hatype=824)),
        (0, struct.pack("<I", 7) + V4),
    ],
    ids=["arp", "sll-netlink", "null-unknown-family"],
)
def test_frames_that_carry_no_ip_are_not_tcp(link_type: int, frame: bytes) -> None:
    table = read_capture(io.BytesIO(pcap_file([Packet(0, frame)], link_type=link_type))).packets
    assert table.status.tolist() == [NOT_TCP]
    assert table.ip_version.tolist() == [0]


def test_frame_shorter_than_its_link_header() -> None:
    table = read_capture(io.BytesIO(pcap_file([Packet(0, b"\x00" * 10)]))).packets
    assert table.status.tolist() == [TRUNCATED | NOT_TCP]


def test_unsupported_link_type_is_counted_and_reported() -> None:
    capture = read_capture(io.BytesIO(pcap_file([Packet(0, V4), Packet(1, V4)], link_type=105)))
    assert capture.info.packets == 2
    assert capture.packets.status.tolist() == [UNSUPPORTED_LINK | NOT_TCP] * 2
    (warning,) = capture.info.warnings
    assert warning.startswith("2 packets have link type 105")
