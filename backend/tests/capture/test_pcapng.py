"""pcapng: sections in either byte order, interfaces with their own link type and clock, EPB/SPB/OPB,
unknown blocks, comments, and the block-length checks."""

from __future__ import annotations

import io
import struct

import pytest

from tcplens.capture import MalformedCaptureError, read_capture
from tcplens.capture.table import PARSED, SYN
from tests.capture.builders import (
    Interface,
    Packet,
    Section,
    block,
    ethernet,
    ipv4,
    ipv6,
    pcapng_file,
    tcp,
)

T0 = 1_700_000_000_000_000_000


def _syn(sport: int, v6: bool = False) -> bytes:
    segment = tcp(sport, 80, 5000 + sport, 0, SYN, 64240)
    if v6:
        return ethernet(ipv6("2001:db8::1", "2001:db8::2", 6, segment), 0x86DD)
    return ethernet(ipv4("192.0.2.1", "192.0.2.2", 6, segment))


def _read(data: bytes):  # type: ignore[no-untyped-def]
    return read_capture(io.BytesIO(data))


@pytest.mark.parametrize("big", [False, True])
def test_epb_in_either_byte_order(big: bool) -> None:
    packets = [Packet(T0 + k * 1000, _syn(1000 + k)) for k in range(3)]
    capture = _read(pcapng_file([Section([Interface()], packets, big=big)]))
    assert capture.info.format == "pcapng"
    assert capture.packets.src_port.tolist() == [1000, 1001, 1002]
    assert capture.packets.ts_ns.tolist() == [T0, T0 + 1000, T0 + 2000]
    assert (capture.packets.status == PARSED).all()


def test_sections_each_with_their_own_byte_order_and_interfaces() -> None:
    first = Section(
        [Interface(), Interface(link_type=101)],
        [Packet(T0, _syn(1)), Packet(T0 + 1000, _syn(2)[14:], interface=1)],
    )
    second = Section([Interface(link_type=101)], [Packet(T0 + 2000, _syn(3)[14:])], big=True)
    capture = _read(pcapng_file([first, second]))
    table = capture.packets
    assert table.src_port.tolist() == [1, 2, 3]
    # interface ids restart in each section; the table numbers them across the file
    assert table.interface.tolist() == [0, 1, 2]
    assert table.link_type.tolist() == [1, 101, 101]
    assert capture.info.link_types == (1, 101)


@pytest.mark.parametrize(
    ("tsresol", "tsoffset"),
    [(9, None), (3, None), (0x80 | 20, None), (6, 1_000_000), (9, -5)],
    ids=["ns", "ms", "2^-20", "offset", "negative-offset"],
)
def test_interface_clock_resolution_and_offset(tsresol: int, tsoffset: int | None) -> None:
    interface = Interface(tsresol=tsresol, tsoffset=tsoffset)
    ts = [T0, T0 + 500_000_000, T0 + 3_250_000_000]  # exact in every resolution tested
    capture = _read(pcapng_file([Section([interface], [Packet(t, _syn(7)) for t in ts])]))
    assert capture.packets.ts_ns.tolist() == ts


def test_simple_and_obsolete_packet_blocks() -> None:
    spb = Section([Interface()], [Packet(T0, _syn(11)), Packet(T0, _syn(12))], packet_block="spb")
    opb = Section([Interface()], [Packet(T0 + 5000, _syn(13))], packet_block="opb")
    capture = _read(pcapng_file([spb, opb]))
    assert capture.packets.src_port.tolist() == [11, 12, 13]
    assert capture.packets.ts_ns.tolist()[2] == T0 + 5000


def test_spb_is_cut_at_the_interface_snaplen() -> None:
    frame = _syn(14)
    capture = _read(
        pcapng_file([Section([Interface(snaplen=40)], [Packet(T0, frame)], packet_block="spb")])
    )
    assert capture.packets.caplen.tolist() == [40]
    assert capture.packets.origlen.tolist() == [len(frame)]


def test_unknown_blocks_are_skipped_and_comments_kept() -> None:
    e = "<"
    section = Section(
        [Interface(comment="eth0 at the server")],
        [Packet(T0, _syn(21), comment="the first SYN"), Packet(T0 + 1, _syn(22))],
        comment="lab capture",
        extra_blocks=[
            (0x00000004, b"\x00" * 16),
            (0x0BADBAD0, b"custom"),
            (0x00000005, struct.pack(e + "IIII", 0, 0, 0, 0)),
        ],
    )
    capture = _read(pcapng_file([section]))
    assert capture.packets.src_port.tolist() == [21, 22]
    assert capture.info.comments == ("lab capture", "eth0 at the server", "frame 1: the first SYN")


def test_ipv6_addresses() -> None:
    capture = _read(pcapng_file([Section([Interface()], [Packet(T0, _syn(31, v6=True))])]))
    table = capture.packets
    assert table.ip_version.tolist() == [6]
    assert bytes(table.addresses[table.src_id[0]]) == bytes.fromhex(
        "20010db8000000000000000000000001"
    )
    assert table.tcp_hdr_len.tolist() == [20]
    assert table.tcp_payload_len.tolist() == [0]


def _two_packets() -> bytes:
    return pcapng_file([Section([Interface()], [Packet(T0, _syn(1)), Packet(T0 + 1, _syn(2))])])


def _second_epb_offset(data: bytes) -> int:
    shb = struct.unpack_from("<I", data, 4)[0]
    idb = struct.unpack_from("<I", data, shb + 4)[0]
    first = struct.unpack_from("<I", data, shb + idb + 4)[0]
    return int(shb + idb + first)


@pytest.mark.parametrize(
    ("length", "reason"),
    [(10, "block length is invalid"), (62, "block length is invalid"), (1 << 30, "ends at byte")],
    ids=["below-12", "not-multiple-of-4", "past-the-end"],
)
def test_bad_block_length_keeps_the_packets_before(length: int, reason: str) -> None:
    data = bytearray(_two_packets())
    at = _second_epb_offset(bytes(data))
    data[at + 4 : at + 8] = struct.pack("<I", length)
    capture = _read(bytes(data))
    assert capture.info.packets == 1
    assert capture.info.truncated
    assert any(reason in w for w in capture.info.warnings)


def test_trailing_length_must_equal_the_leading_one() -> None:
    data = bytearray(_two_packets())
    at = _second_epb_offset(bytes(data))
    length = struct.unpack_from("<I", data, at + 4)[0]
    data[at + length - 4 : at + length] = struct.pack("<I", length + 4)
    capture = _read(bytes(data))
    assert capture.info.packets == 1
    assert any(
        f"stopped at byte {at:,}" in w and "trailing length" in w for w in capture.info.warnings
    )


def test_packet_on_an_undescribed_interface() -> None:
    data = pcapng_file(
        [Section([Interface()], [Packet(T0, _syn(1)), Packet(T0, _syn(2), interface=0)])]
    )
    edited = bytearray(data)
    at = _second_epb_offset(data)
    edited[at + 8 : at + 12] = struct.pack("<I", 3)
    capture = _read(bytes(edited))
    assert capture.info.packets == 1
    assert any("interface that was not described" in w for w in capture.info.warnings)


def test_bad_byte_order_magic_is_malformed() -> None:
    data = bytearray(_two_packets())
    data[8:12] = b"\x00\x00\x00\x00"
    with pytest.raises(MalformedCaptureError, match="byte-order"):
        _read(bytes(data))


def test_cut_inside_the_section_header_is_malformed() -> None:
    with pytest.raises(MalformedCaptureError, match="first section header"):
        _read(_two_packets()[:20])


def test_a_block_larger_than_the_buffer_is_skipped_when_not_needed() -> None:
    e = "<"
    big_unknown = block(e, 0x00000BAD, b"\x00" * (9 << 20))
    data = _two_packets()
    shb = struct.unpack_from("<I", data, 4)[0]
    idb = struct.unpack_from("<I", data, shb + 4)[0]
    data = data[: shb + idb] + big_unknown + data[shb + idb :]
    capture = _read(data)
    assert capture.packets.src_port.tolist() == [1, 2]
    assert not capture.info.truncated


def test_packet_comments_keep_their_frame_numbers_across_buffers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tcplens.capture import buffers

    monkeypatch.setattr(buffers, "STREAM_BUFFER", 2048)
    packets = [
        Packet(T0 + k, _syn(k + 1), comment="first" if k == 0 else "late" if k == 299 else None)
        for k in range(300)
    ]
    capture = _read(pcapng_file([Section([Interface()], packets)]))
    assert capture.info.packets == 300
    assert capture.info.comments == ("frame 1: first", "frame 300: late")
