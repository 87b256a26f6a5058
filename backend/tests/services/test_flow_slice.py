"""Cutting frames out of a capture file (services/flow_slice): tshark reads each slice and sees
every frame in it as it saw that frame in the whole capture, across the formats the reader takes:
a pcapng with many interfaces, a big-endian pcap, a nanosecond pcap, zstd and gzip; a slice cut
short by its byte limit holds a prefix of the frames and says how many."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest
import zstandard

from tcplens.services.flow_slice import SliceUnavailable, cut_slice
from tests.capture.shared_captures import SHARED_CAPTURES, TCPDUMP_TESTS, Tshark, require

REAL_WORLD = SHARED_CAPTURES / "corpus" / "real-world"
TSHARK = Tshark()


def _rows(path: Path) -> list[dict[str, str]]:
    return [{k: v for k, v in r.items() if k != "frame.number"} for r in TSHARK.frames(path)]


def _check(original: Path, stored: bytes, tmp_path: Path, every: int = 3) -> int:
    """Cut every ``every``-th frame of ``original`` from ``stored`` (its bytes as kept, maybe
    compressed); tshark's rows of the slice are the original's rows of those frames."""
    whole = _rows(original)
    frames = np.arange(2, len(whole) + 1, every, dtype=np.int64)
    out = io.BytesIO()
    cut = cut_slice(io.BytesIO(stored), frames, out)
    assert cut.frames == cut.flow_frames == len(frames) > 0
    piece = tmp_path / f"slice-{original.name}"
    piece.write_bytes(out.read())
    assert piece.stat().st_size == cut.size
    assert _rows(piece) == [whole[f - 1] for f in frames.tolist()]
    return cut.size


@pytest.mark.parametrize(
    "capture",
    [
        REAL_WORLD / "ndpi_sites.pcapng",  # 22 interfaces
        REAL_WORLD / "pcapplusplus_pcapng-example.pcapng",  # 2 interfaces, 2 link types
        TCPDUMP_TESTS / "pptp.pcap",  # big-endian
        TCPDUMP_TESTS / "tcp-handshake-nano.pcap",  # nanosecond timestamps
    ],
    ids=lambda p: p.name,
)
def test_a_slice_keeps_each_frame_as_tshark_reads_it(capture: Path, tmp_path: Path) -> None:
    require(capture)
    _check(capture, capture.read_bytes(), tmp_path, every=2)


def test_compressed_captures_slice_as_their_contents(tmp_path: Path) -> None:
    capture = REAL_WORLD / "pcapplusplus_example.pcap"
    require(capture)
    plain = capture.read_bytes()
    size = _check(capture, plain, tmp_path)
    assert _check(capture, zstandard.ZstdCompressor().compress(plain), tmp_path) == size
    assert _check(capture, gzip.compress(plain), tmp_path) == size


def test_the_byte_limit_keeps_a_prefix_of_the_frames(tmp_path: Path) -> None:
    capture = REAL_WORLD / "pcapplusplus_example.pcap"
    require(capture)
    whole = _rows(capture)
    frames = np.arange(1, len(whole) + 1, dtype=np.int64)
    out = io.BytesIO()
    cut = cut_slice(io.BytesIO(capture.read_bytes()), frames, out, max_bytes=100_000)
    assert 0 < cut.frames < cut.flow_frames == len(whole)
    assert cut.size <= 100_000
    piece = tmp_path / "prefix.pcap"
    piece.write_bytes(out.read())
    assert _rows(piece) == whole[: cut.frames]
    # the frame limit, likewise
    out = io.BytesIO()
    assert cut_slice(io.BytesIO(capture.read_bytes()), frames, out, max_frames=7).frames == 7


def test_not_a_capture_and_no_frames_are_refused() -> None:
    with pytest.raises(SliceUnavailable):
        cut_slice(io.BytesIO(b"GET / HTTP/1.1\r\n"), np.array([1]), io.BytesIO())
    with pytest.raises(SliceUnavailable):
        cut_slice(io.BytesIO(b""), np.empty(0, np.int64), io.BytesIO())
