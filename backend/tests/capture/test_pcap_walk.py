"""The parallel pcap walk finds exactly the serial walk's records and stop, whatever the cuts.

Each test compares ``walk_pcap`` (the file cut into many parts, guessed record starts verified
at the joins) with ``walk_pcap_records`` over the whole buffer (one core, no guesses), on files
built to make the guesses wrong: payloads that look like record headers, corruption right after
a cut, files that end inside a record, tiny files.
"""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numba
import numpy as np
import pytest

from tcplens.capture import pcap_walk, read_capture, reader
from tcplens.capture.compiled import prefetch
from tcplens.capture.formats import PcapHeader, parse_file_header
from tcplens.capture.pcap import walk_pcap_records
from tcplens.capture.pcap_walk import CHAIN, walk_pcap
from tcplens.capture.records import STOP_BAD, STOP_NEED_MORE
from tcplens.capture.table import ACK, PSH
from tests.capture.builders import Packet, ethernet, ipv4, pcap_file, tcp

T0 = 1_700_000_000_000_000_000
PARTS = (1, 2, 3, 5, 8, 13, 31, 64)


# compiled at each run, not cached (as test_take_next's kernel)
@numba.njit
def _sum_prefetching(buf: np.ndarray, ahead: int) -> int:  # pragma: no cover - compiled
    total = 0
    for p in range(buf.shape[0]):
        prefetch(buf, min(p + ahead, buf.shape[0] - 1))
        total += buf[p]
    return total


def test_prefetch_is_only_a_hint() -> None:
    """The walks' prefetch reads and writes nothing: every position, the last byte included."""
    buf = np.random.default_rng(7).integers(0, 256, 10_000, dtype=np.uint8)
    before = buf.copy()
    for ahead in (0, 1, 300, 10_000):
        assert _sum_prefetching(buf, ahead) == int(before.sum(dtype=np.int64))
    assert np.array_equal(buf, before)


def _frame(payload: bytes, seq: int) -> bytes:
    return ethernet(ipv4("10.0.0.1", "10.0.0.2", 6, tcp(40000, 443, seq, 1, ACK | PSH, 500,
                                                          payload=payload)))  # fmt: skip


def _capture(count: int, *, big: bool = False, nanos: bool = False) -> bytes:
    sizes = np.random.default_rng(count).integers(0, 300, count)
    packets = [
        Packet(T0 + k * 1_000_000, _frame(b"p" * int(size), k))
        for k, size in enumerate(sizes.tolist())
    ]
    return pcap_file(packets, big=big, nanos=nanos)


def _serial(data: bytes) -> tuple[list[int], int, int, int]:
    header = parse_file_header(data[:24])
    buf = np.frombuffer(data, np.uint8)
    index = np.empty(len(data) // 16 + 1, np.int64)
    n, pos, stop, info = walk_pcap_records(buf, 24, len(data), header.big_endian, index)
    return index[:n].tolist(), pos, stop, info


def _parallel(data: bytes, parts: int) -> tuple[list[int], int, int, int, int]:
    """The walk in ``parts``, and the offsets the decoder finds by walking from its marks."""
    header = parse_file_header(data[:24])
    buf = np.frombuffer(data, np.uint8)
    walk = walk_pcap(buf, 24, len(data), header, parts=parts, min_part=1, mark_every=5)
    offsets: list[int] = []
    for chunk in walk.chunks(walk.rows, np.empty(23, np.int64), 23, 4):
        assert chunk.first == len(offsets) and 0 < chunk.last - chunk.first <= 23
        for p, pos in enumerate(chunk.part_pos.tolist()):
            assert 0 < chunk.part_first[p + 1] - chunk.part_first[p] <= 5
            for _ in range(chunk.part_first[p + 1] - chunk.part_first[p]):
                offsets.append(pos + 16)
                (captured,) = struct.unpack_from(">I" if header.big_endian else "<I", data, pos + 8)
                pos += 16 + captured
    assert len(offsets) == walk.rows
    return offsets, walk.pos, walk.stop, walk.info, walk.redone


def _same_at_every_cut(data: bytes, parts: tuple[int, ...] = PARTS) -> int:
    """Assert the parallel walk equals the serial one for every number of parts; the serial
    redos it needed (wrong guesses), summed."""
    expected = _serial(data)
    redone = 0
    for k in parts:
        *found, redos = _parallel(data, k)
        assert tuple(found) == expected, f"{k} parts"
        redone += redos
    return redone


def _fake_records(count: int, size: int) -> bytes:
    """``count`` plausible pcap records (little-endian, µs), to hide in a packet's payload."""
    return b"".join(
        struct.pack("<IIII", 1_700_000_000, k, size, size) + bytes(size) for k in range(count)
    )


@pytest.mark.parametrize("big", [False, True])
@pytest.mark.parametrize("nanos", [False, True])
def test_well_formed_capture_is_walked_in_parts_without_redo(big: bool, nanos: bool) -> None:
    data = _capture(400, big=big, nanos=nanos)
    assert _same_at_every_cut(data) == 0
    assert len(_serial(data)[0]) == 400


def test_payload_that_looks_like_records_is_a_wrong_guess_redone_serially() -> None:
    hidden = _fake_records(2 * CHAIN, 20)  # 2 * 8 records of 36 bytes inside one payload
    packets = [Packet(T0 + k * 1000, _frame(b"a" * 50, k)) for k in range(40)]
    packets[20] = Packet(T0 + 20_000, _frame(hidden, 20))
    data = pcap_file(packets)
    parts = tuple(range(2, 60))
    assert _same_at_every_cut(data, parts) > 0  # some cut guessed inside the payload
    assert len(_serial(data)[0]) == 40


def test_capture_of_only_lookalike_payloads_gives_the_serial_walk() -> None:
    packets = [
        Packet(T0 + k * 1000, _frame(_fake_records(CHAIN + 2, 4 + k % 7), k)) for k in range(30)
    ]
    data = pcap_file(packets)
    assert _same_at_every_cut(data, tuple(range(2, 40))) > 0
    assert len(_serial(data)[0]) == 30


def test_corrupt_record_right_after_a_cut_stops_where_the_serial_walk_stops() -> None:
    data = bytearray(_capture(300))
    offsets = _serial(bytes(data))[0]
    for k in (2, 3, 7):
        for cut in range(1, k):
            corrupt = bytearray(data)
            at = 24 + cut * (len(data) - 24) // k
            record = next(o - 16 for o in offsets if o - 16 >= at)  # first record after the cut
            corrupt[record + 8 : record + 12] = (1 << 30).to_bytes(4, "little")
            expected = _serial(bytes(corrupt))
            assert expected[2:] == (STOP_BAD, 1) and expected[1] == record
            assert _parallel(bytes(corrupt), k)[:4] == expected


def test_capture_cut_inside_a_record_at_every_length() -> None:
    data = _capture(60)
    for cut in range(len(data) - 200, len(data) + 1, 7):
        expected = _serial(data[:cut])
        assert expected[2] == STOP_NEED_MORE
        for k in (2, 5, 16):
            assert _parallel(data[:cut], k)[:4] == expected


@pytest.mark.parametrize("count", [0, 1, 2])
def test_tiny_captures(count: int) -> None:
    data = _capture(count)
    assert _same_at_every_cut(data) == 0
    assert len(_serial(data)[0]) == count


def test_random_corruption_gives_the_serial_walk() -> None:
    rng = np.random.default_rng(4)
    clean = np.frombuffer(_capture(200), np.uint8)
    for _ in range(150):
        data = clean.copy()
        at = rng.integers(24, len(data), rng.integers(1, 6))
        data[at] = rng.integers(0, 256, at.shape[0])
        if rng.random() < 0.3:  # a zeroed stretch: zero-length records, 16 bytes each
            start = int(rng.integers(24, len(data) - 400))
            data[start : start + int(rng.integers(16, 400))] = 0
        _same_at_every_cut(data.tobytes(), (2, 7, 19))


def test_garbage_after_the_first_records_gives_the_serial_stop() -> None:
    rng = np.random.default_rng(7)
    garbage = rng.integers(0, 256, 3 << 20, dtype=np.uint8).tobytes()  # cuts 375 KiB apart
    data = _capture(5) + garbage
    expected = _serial(data)
    assert len(expected[0]) == 5 and expected[2] == STOP_BAD
    assert _parallel(data, 8)[:4] == expected


def test_header_without_snaplen_still_guesses() -> None:
    data = bytearray(_capture(200))
    data[16:20] = (0).to_bytes(4, "little")  # snaplen 0: the record limit bounds the guesses
    assert parse_file_header(bytes(data[:24])) == PcapHeader(False, False, 0, 1)
    assert _same_at_every_cut(bytes(data)) == 0


@pytest.mark.parametrize("chunk", [1 << 17, 50])
@pytest.mark.parametrize("tail", ["whole", "cut", "corrupt"])
def test_mapped_file_read_in_parts_equals_the_stream_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tail: str, chunk: int
) -> None:
    data = bytearray(_capture(3000))
    if tail == "cut":
        data = data[:-40]
    elif tail == "corrupt":
        record = _serial(bytes(data))[0][2000] - 16
        data[record + 8 : record + 12] = (1 << 30).to_bytes(4, "little")
    path = tmp_path / "parts.pcap"
    path.write_bytes(bytes(data))
    monkeypatch.setattr(pcap_walk, "MIN_PART_BYTES", 1000)  # as many parts as it takes
    monkeypatch.setattr(reader, "DECODE_CHUNK", chunk)  # 50: decoded from a mark every 6 rows
    monkeypatch.setattr(reader, "_PARTS", 8)
    mapped = read_capture(path)
    streamed = read_capture(io.BytesIO(bytes(data)))
    assert mapped.info == streamed.info
    assert mapped.info.packets == {"whole": 3000, "cut": 2999, "corrupt": 2000}[tail]
    for name in ("frame", "ts_ns", "caplen", "tcp_seq", "tcp_payload_len", "status", "src_id"):
        assert np.array_equal(getattr(mapped.packets, name), getattr(streamed.packets, name))
