"""Format sniffing and gzip/zstd streams: decided by magic bytes, bounded, cut or corrupt streams."""

from __future__ import annotations

import gzip
import io
import random
from pathlib import Path

import numpy as np
import pytest
import zstandard

from tcplens.capture import (
    CaptureTooLargeError,
    CompressionError,
    NotACaptureError,
    read_capture,
    sniff_format,
)
from tcplens.capture.table import ACK
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, tcp

PACKETS = [
    Packet(
        1_000_000_000 * k,
        ethernet(ipv4("10.0.0.1", "10.0.0.2", 6, tcp(1, 2, k, 0, ACK, 9, payload=bytes(200)))),
    )
    for k in range(400)
]
PCAP = pcap_file(PACKETS)


@pytest.mark.parametrize(
    ("first", "kind"),
    [
        (b"\xd4\xc3\xb2\xa1\x02\x00", "pcap"),
        (b"\xa1\xb2\xc3\xd4", "pcap"),
        (b"\x4d\x3c\xb2\xa1", "pcap"),
        (b"\xa1\xb2\x3c\x4d", "pcap"),
        (b"\x0a\x0d\x0d\x0a\x1c\x00", "pcapng"),
        (b"\x1f\x8b\x08\x00", "gzip"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"PK\x03\x04", None),
        (b"GET / HTTP/1.1", None),
        (b"", None),
    ],
)
def test_sniff_format(first: bytes, kind: str | None) -> None:
    assert sniff_format(first) == kind


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_compressed_capture_reads_like_the_plain_one(compression: str, tmp_path: Path) -> None:
    packed = (
        gzip.compress(PCAP) if compression == "gzip" else zstandard.ZstdCompressor().compress(PCAP)
    )
    path = tmp_path / "capture.txt"  # the name says nothing: the magic bytes decide
    path.write_bytes(packed)
    capture = read_capture(path)
    assert capture.info.compression == compression
    assert capture.info.format == "pcap"
    assert np.array_equal(capture.packets.tcp_seq, np.arange(400))
    assert not capture.info.truncated


def test_multi_member_gzip() -> None:
    half = 24 + sum(16 + len(p.data) for p in PACKETS[:200])
    packed = gzip.compress(PCAP[:half]) + gzip.compress(PCAP[half:])
    assert read_capture(io.BytesIO(packed)).info.packets == 400


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_decompressed_size_is_bounded(compression: str) -> None:
    packed = (
        gzip.compress(PCAP) if compression == "gzip" else zstandard.ZstdCompressor().compress(PCAP)
    )
    with pytest.raises(CaptureTooLargeError) as error:
        read_capture(io.BytesIO(packed), max_bytes=len(PCAP) // 2)
    assert error.value.code == "too_large"
    assert read_capture(io.BytesIO(packed), max_bytes=len(PCAP)).info.packets == 400


def test_plain_file_size_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "plain.pcap"
    path.write_bytes(PCAP)
    with pytest.raises(CaptureTooLargeError, match="above the limit"):
        read_capture(path, max_bytes=1000)


def test_zip_bomb_stops_at_the_limit() -> None:
    bomb = gzip.compress(PCAP[:24] + bytes(64 << 20))  # 64 MiB of zeros in ~64 KiB
    with pytest.raises(CaptureTooLargeError):
        read_capture(io.BytesIO(bomb), max_bytes=16 << 20)


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
def test_cut_compressed_stream_keeps_the_packets_before(compression: str) -> None:
    noise = random.Random(3).randbytes  # incompressible payloads: the cut falls after whole blocks
    frames = [
        ethernet(ipv4("10.0.0.1", "10.0.0.2", 6, tcp(1, 2, k, 0, ACK, 9, payload=noise(200))))
        for k in range(8000)
    ]
    plain = pcap_file([Packet(k, frame) for k, frame in enumerate(frames)])
    packed = (
        gzip.compress(plain)
        if compression == "gzip"
        else zstandard.ZstdCompressor().compress(plain)
    )
    capture = read_capture(io.BytesIO(packed[: len(packed) * 2 // 3]))
    assert 4000 < capture.info.packets < 6000
    assert capture.info.truncated
    assert any(f"The {compression} stream ends early" in w for w in capture.info.warnings)


def test_corrupt_gzip_from_the_start_is_a_compression_error() -> None:
    packed = bytearray(gzip.compress(PCAP))
    packed[3] = 0xFF  # reserved flag bits set
    with pytest.raises(CompressionError) as error:
        read_capture(io.BytesIO(bytes(packed)))
    assert error.value.code == "bad_compression"


def test_garbage_after_the_gzip_stream_keeps_the_capture() -> None:
    capture = read_capture(io.BytesIO(gzip.compress(PCAP) + b"garbage!"))
    assert capture.info.packets == 400
    assert any("gzip stream is corrupt" in w for w in capture.info.warnings)


def test_zstd_cut_inside_its_first_block() -> None:
    packed = zstandard.ZstdCompressor().compress(PCAP)
    with pytest.raises(CompressionError, match="ends early, before the capture inside it starts"):
        read_capture(io.BytesIO(packed[: len(packed) // 2]))


def test_compressed_file_that_is_not_a_capture() -> None:
    with pytest.raises(
        NotACaptureError, match="gzip file does not contain a pcap or pcapng capture"
    ):
        read_capture(io.BytesIO(gzip.compress(b"hello world, this is text")))
