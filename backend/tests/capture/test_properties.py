"""Properties: one set of packets reads the same in every container; broken files only raise
reader errors. Hypothesis runs derandomized (a fixed seed) with bounded examples, so CI is stable."""

from __future__ import annotations

import dataclasses
import gzip
import io

import numpy as np
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tcplens.capture import CaptureError, read_capture
from tcplens.capture.table import PacketTable
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

PROPERTY = settings(
    max_examples=40, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
FUZZ = settings(
    max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

OPTIONS = st.sampled_from(
    [
        b"",
        b"\x02\x04\x05\xb4\x04\x02\x08\x0a\x00\x00\x00\x01\x00\x00\x00\x00\x01\x03\x03\x07",
        b"\x01\x01\x08\x0a\x00\x01\x00\x00\x00\x02\x00\x00",
        b"\x01\x01\x05\x0a\x00\x00\x10\x00\x00\x00\x20\x00",
        b"\x08\x00\x02\x04",  # malformed: length 0
    ]
)


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["tcp4", "tcp6", "udp4"]))
    sport, dport = draw(st.integers(1, 65535)), draw(st.integers(1, 65535))
    payload = bytes(draw(st.integers(0, 300)))
    if kind == "udp4":
        return ethernet(ipv4("10.0.0.1", "10.0.0.2", 17, udp(sport, dport, payload)))
    segment = tcp(
        sport, dport, draw(st.integers(0, 2**32 - 1)), draw(st.integers(0, 2**32 - 1)),
        draw(st.integers(0, 255)), draw(st.integers(0, 65535)), draw(OPTIONS), payload,
    )  # fmt: skip
    if kind == "tcp6":
        return ethernet(ipv6("2001:db8::1", "2001:db8::2", 6, segment), 0x86DD)
    return ethernet(ipv4("10.0.0.1", "10.0.0.2", 6, segment))


@st.composite
def packet_lists(draw: st.DrawFn) -> list[Packet]:
    count = draw(st.integers(0, 25))
    start = draw(st.integers(0, 2**31)) * 1_000_000_000
    gaps = draw(st.lists(st.integers(0, 10**9), min_size=count, max_size=count))
    packets = []
    ts = start
    for gap in gaps:
        ts += gap * 1000  # whole microseconds: exact in every container tested
        frame = draw(frames())
        snap = draw(st.sampled_from([None, 96, 60]))
        data = frame if snap is None else frame[:snap]
        packets.append(Packet(ts, data, origlen=len(frame)))
    return packets


def _assert_same(a: PacketTable, b: PacketTable) -> None:
    for f in dataclasses.fields(PacketTable):
        if f.name == "interface":
            continue
        assert np.array_equal(getattr(a, f.name), getattr(b, f.name)), f.name


@PROPERTY
@given(packet_lists())
def test_pcap_pcapng_gzip_zstd_give_identical_tables(packets: list[Packet]) -> None:
    reference = read_capture(io.BytesIO(pcap_file(packets))).packets
    assert len(reference) == len(packets)
    plain = pcap_file(packets)
    variants = [
        pcap_file(packets, big=True),
        pcap_file(packets, nanos=True),
        pcap_file(packets, big=True, nanos=True),
        pcapng_file([Section([Interface()], packets)]),
        pcapng_file([Section([Interface(tsresol=9)], packets, big=True)]),
        gzip.compress(plain),
        zstandard.ZstdCompressor().compress(plain),
    ]
    for data in variants:
        _assert_same(reference, read_capture(io.BytesIO(data)).packets)


def _valid_captures() -> list[bytes]:
    packets = [
        Packet(k * 1000, frame)
        for k, frame in enumerate(
            [
                ethernet(
                    ipv4(
                        "10.0.0.1",
                        "10.0.0.2",
                        6,
                        tcp(1, 2, 3, 4, 0x12, 5, b"\x02\x04\x05\xb4", b"abc"),
                    )
                ),
                ethernet(
                    ipv6(
                        "2001:db8::1",
                        "2001:db8::2",
                        0,
                        bytes([6, 0]) + bytes(6) + tcp(1, 2, 3, 4, 0x10, 5),
                    ),
                    0x86DD,
                ),
                ethernet(
                    ipv4(
                        "10.0.0.1",
                        "10.0.0.53",
                        17,
                        udp(
                            5000,
                            53,
                            bytes.fromhex(
                                "12340100000100000000000003777777076578616d706c6503636f6d0000010001"
                            ),
                        ),
                    )
                ),
            ]
        )
    ]
    return [
        pcap_file(packets),
        pcapng_file(
            [
                Section([Interface(tsresol=9, comment="x")], packets, comment="y"),
                Section([Interface()], packets, big=True),
            ]
        ),
    ]


VALID = _valid_captures()


@FUZZ
@given(
    st.sampled_from(range(len(VALID))),
    st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=8),
    st.one_of(st.none(), st.integers(0, 10**6)),
)
def test_mutations_and_truncations_raise_only_reader_errors(
    which: int, flips: list[tuple[int, int]], cut: int | None
) -> None:
    data = bytearray(VALID[which])
    for pos, value in flips:
        data[pos % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    try:
        capture = read_capture(io.BytesIO(bytes(data)))
    except CaptureError as error:
        assert error.code and str(error)
        return
    assert capture.info.packets == len(capture.packets)
    assert capture.info.packets <= 6
