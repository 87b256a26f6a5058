"""IP and TCP header decoding on built packets: fragments, the IPv6 extension chain, options."""

from __future__ import annotations

import io
import struct
from typing import Any

from tcplens.capture import read_capture
from tcplens.capture.table import (
    ACK,
    ECE,
    FIN,
    FRAGMENT,
    LONG_LENGTH,
    MALFORMED,
    NOT_TCP,
    PARSED,
    SYN,
    TRUNCATED,
    PacketTable,
)
from tests.capture.builders import (
    Interface,
    Packet,
    Section,
    ethernet,
    ipv4,
    ipv6,
    pcap_file,
    pcapng_file,
    tcp,
    udp,
)

SYN_OPTIONS = (
    b"\x02\x04\x05\xb4"  # MSS 1460
    + b"\x04\x02"  # SACK permitted
    + b"\x08\x0a\x00\x00\x00\x07\x00\x00\x00\x00"  # timestamps 7, 0
    + b"\x01\x03\x03\x07"  # NOP, window scale 7
)


def _table(*frames: bytes) -> PacketTable:
    packets = [Packet(k, frame) for k, frame in enumerate(frames)]
    return read_capture(io.BytesIO(pcap_file(packets))).packets


def _v4(segment: bytes, **kw: Any) -> bytes:
    return ethernet(ipv4("10.1.1.1", "10.1.1.2", 6, segment, **kw))


def test_syn_options() -> None:
    t = _table(_v4(tcp(5, 6, 100, 0, SYN | ECE, 65535, SYN_OPTIONS)))
    assert (t.mss[0], t.wscale[0], bool(t.sack_perm[0]), bool(t.has_ts[0])) == (1460, 7, True, True)
    assert (t.ts_val[0], t.ts_ecr[0]) == (7, 0)
    assert t.tcp_hdr_len[0] == 40
    assert t.tcp_flags[0] == SYN | ECE


def test_sack_blocks() -> None:
    sack = b"\x01\x01\x05\x12" + struct.pack("!4I", 1000, 2000, 3000, 4000)
    t = _table(_v4(tcp(5, 6, 1, 1, ACK, 100, sack)))
    assert t.sack_count[0] == 2
    assert t.sack_left[0, :2].tolist() == [1000, 3000]
    assert t.sack_right[0, :2].tolist() == [2000, 4000]
    assert t.mss[0] == -1 and t.wscale[0] == -1


def test_malformed_option_ends_parsing_for_that_packet_only() -> None:
    bad = b"\x02\x04\x05\xb4" + b"\x08\x00" + b"\x03\x03\x07\x00"  # timestamps with length 0
    t = _table(_v4(tcp(5, 6, 1, 0, SYN, 100, bad)), _v4(tcp(5, 6, 1, 0, SYN, 100, SYN_OPTIONS)))
    assert t.mss.tolist() == [1460, 1460]
    assert t.wscale.tolist() == [-1, 7]  # after the bad option nothing more is read
    assert t.status.tolist() == [PARSED, PARSED]


def test_option_running_past_the_header_is_ignored() -> None:
    past = b"\x01\x01\x01\x08\x0a\x00\x00\x00"  # timestamps claims 10 bytes, 5 remain
    t = _table(_v4(tcp(5, 6, 1, 0, ACK, 100, past)))
    assert not t.has_ts[0]
    assert t.status[0] == PARSED


def test_ipv4_fragments_first_parsed_later_ones_never_tcp() -> None:
    segment = tcp(5, 6, 77, 0, ACK, 100, payload=b"a" * 40)
    first = _v4(segment[:32], frag=0x2000)  # more fragments, offset 0
    later = ethernet(ipv4("10.1.1.1", "10.1.1.2", 6, segment[32:], frag=4))  # offset 32 bytes
    t = _table(first, later)
    assert t.status.tolist() == [PARSED | FRAGMENT, FRAGMENT | NOT_TCP]
    assert t.tcp_seq.tolist() == [77, 0]


def test_ipv4_options_are_skipped() -> None:
    t = _table(
        ethernet(
            ipv4(
                "10.1.1.1",
                "10.1.1.2",
                6,
                tcp(5, 6, 9, 0, FIN | ACK, 1),
                options=b"\x01\x01\x01\x00",
            )
        )
    )
    assert t.tcp_seq.tolist() == [9]
    assert t.tcp_flags.tolist() == [FIN | ACK]


def test_zero_ipv4_total_length_means_the_frame_length() -> None:
    # TSO on the capturing host: the kernel hands the NIC an IP length of 0 (Wireshark uses the frame)
    t = _table(_v4(tcp(5, 6, 1, 1, ACK, 100, payload=b"z" * 3000), total_len=0))
    assert t.tcp_payload_len.tolist() == [3000]


def test_lengths_of_64_kib_and_more_are_kept_whole() -> None:
    # GRO/TSO super-frames: a 70,000-byte frame captured whole, one cut at 96 bytes, both with
    # the IP length 0 the kernel gives them; around them, ordinary frames. The 16-bit columns
    # hold LONG_LENGTH for them and ``long_*`` their true lengths; the payload lengths come from
    # the frame's length (the IP length is 0).
    big = _v4(tcp(5, 6, 1, 1, ACK, 100, payload=b"z" * (70_000 - 54)), total_len=0)
    small = _v4(tcp(5, 6, 1, 1, ACK, 100, payload=b"y" * 10))
    packets = [
        Packet(0, small), Packet(1, big), Packet(2, small), Packet(3, big[:96], origlen=70_000)
    ]  # fmt: skip
    for data in (
        pcap_file(packets),
        pcapng_file([Section([Interface()], packets)]),
    ):
        t = read_capture(io.BytesIO(data)).packets
        assert t.caplen.tolist() == [64, 70_000, 64, 96]
        assert t.origlen.tolist() == [64, 70_000, 64, 70_000]
        assert t.tcp_payload_len.tolist() == [10, 70_000 - 54, 10, 70_000 - 54]
        assert t.caplen16.tolist() == [64, LONG_LENGTH, 64, 96]
        assert t.long_rows.tolist() == [1, 3]
        assert t.long_caplen.tolist() == [70_000, 96]
        assert t.tcp_payload_len16.tolist() == [10, LONG_LENGTH, 10, LONG_LENGTH]
        assert t.long_payload.tolist() == [70_000 - 54, 70_000 - 54]


def test_ipv4_total_length_below_its_header_is_malformed() -> None:
    t = _table(_v4(tcp(5, 6, 1, 1, ACK, 100), total_len=12))
    assert t.status.tolist() == [MALFORMED | NOT_TCP]


def test_tcp_header_length_below_20_is_malformed() -> None:
    segment = bytearray(tcp(5, 6, 1, 1, ACK, 100))
    segment[12] = 0x40
    t = _table(_v4(bytes(segment)))
    assert t.status.tolist() == [MALFORMED | NOT_TCP]


def test_ethernet_padding_does_not_count_as_payload() -> None:
    t = _table(_v4(tcp(5, 6, 1, 1, ACK, 100)) + b"\x00" * 6)
    assert t.tcp_payload_len.tolist() == [0]


def test_ipv6_extension_chain_is_walked() -> None:
    segment = tcp(5, 6, 31, 0, SYN, 100)
    hop_by_hop = bytes([60, 0]) + b"\x01\x04\x00\x00\x00\x00"  # next: destination options
    destination = bytes([43, 0]) + b"\x01\x04\x00\x00\x00\x00"  # next: routing
    routing = bytes([44, 0, 0, 0]) + b"\x00" * 4  # next: fragment
    fragment = bytes([6, 0]) + struct.pack("!HI", 0, 1)  # next: TCP, offset 0, last
    chain = hop_by_hop + destination + routing + fragment
    packet = ipv6("2001:db8::1", "2001:db8::2", 0, chain + segment + b"data")
    t = _table(ethernet(packet, 0x86DD) + b"\x00" * 6)  # a trailer after the IPv6 payload
    assert t.ip_proto.tolist() == [6]
    assert t.tcp_seq.tolist() == [31]
    assert t.status.tolist() == [PARSED | FRAGMENT]
    # the IPv6 payload length less the extension chain and the TCP header, not the frame's rest
    assert t.tcp_payload_len.tolist() == [4]


def test_ipv6_later_fragment_is_never_tcp() -> None:
    fragment = bytes([6, 0]) + struct.pack("!HI", 8 << 3, 1)  # offset 64 bytes
    t = _table(ethernet(ipv6("2001:db8::1", "2001:db8::2", 44, fragment + b"\x00" * 20), 0x86DD))
    assert t.status.tolist() == [FRAGMENT | NOT_TCP]


def test_ipv6_unknown_next_header_stops_the_chain() -> None:
    t = _table(ethernet(ipv6("2001:db8::1", "2001:db8::2", 58, b"\x80\x00" + b"\x00" * 6), 0x86DD))
    assert t.ip_proto.tolist() == [58]
    assert t.status.tolist() == [PARSED | NOT_TCP]


def test_ipv6_extension_past_the_capture_is_truncated() -> None:
    frame = ethernet(ipv6("2001:db8::1", "2001:db8::2", 0, bytes([6, 200]) + b"\x00" * 6), 0x86DD)
    t = _table(frame)
    assert t.status[0] & NOT_TCP
    assert t.status[0] & (TRUNCATED | MALFORMED)


def test_udp_ports_are_read_and_marked_not_tcp() -> None:
    t = _table(ethernet(ipv4("10.1.1.1", "10.1.1.2", 17, udp(5353, 5353, b"hello"))))
    assert (t.src_port[0], t.dst_port[0]) == (5353, 5353)
    assert t.ip_proto[0] == 17
    assert t.status.tolist() == [PARSED | NOT_TCP]


def test_ipv4_address_is_ipv4_mapped() -> None:
    t = _table(_v4(tcp(5, 6, 1, 1, ACK, 100)))
    assert bytes(t.addresses[t.src_id[0]]) == bytes.fromhex("00000000000000000000ffff0a010101")
    assert bytes(t.addresses[t.dst_id[0]]) == bytes.fromhex("00000000000000000000ffff0a010102")
