"""The parallel pcapng walk reads exactly what the serial walk reads, whatever the cuts.

Each test reads a pcapng twice: from a stream (walked serially, window by window: the
reference) and mapped from a file (the run of packet blocks walked on all cores, in many parts,
guessed block starts verified at the joins), and compares every column and every capture fact.
The files are built to make the parallel walk stop or guess wrong: payloads made of
well-formed blocks, sections, interfaces, simple packet blocks and comments in the middle,
unknown blocks, corruption, a cut inside a block.
"""

from __future__ import annotations

import dataclasses
import io
import struct
from pathlib import Path

import numpy as np
import pytest

from tcplens.capture import pcapng_walk, read_capture, reader
from tcplens.capture.pcapng_walk import PcapngWalk
from tcplens.capture.table import ACK, PSH
from tests.capture.builders import (
    Interface,
    Packet,
    Section,
    block,
    ethernet,
    ipv4,
    pcapng_file,
    tcp,
)

T0 = 1_700_000_000_000_000_000
PARTS = (1, 2, 3, 7, 16, 64)


def _frame(payload: bytes, seq: int) -> bytes:
    return ethernet(ipv4("10.0.0.1", "10.0.0.2", 6, tcp(40000, 443, seq, 1, ACK | PSH, 500,
                                                          payload=payload)))  # fmt: skip


def _packets(count: int, *, seed: int = 0, payload: bytes = b"p") -> list[Packet]:
    sizes = np.random.default_rng(seed + count).integers(0, 300, count).tolist()
    return [
        Packet(T0 + k * 1_000_000, _frame((payload * 300)[:size], k))
        for k, size in enumerate(sizes)
    ]


def _epb(e: str, k: int, data: bytes, *, interface: int = 0, options: bytes = b"") -> bytes:
    units = T0 // 1000 + k  # µs, the default resolution
    head = struct.pack(
        e + "IIIII", interface, units >> 32, units & 0xFFFFFFFF, len(data), len(data)
    )
    return block(e, 6, head + data + b"\x00" * (-len(data) % 4) + options)


def _fake_blocks(count: int) -> bytes:
    """A TCP payload of well-formed little-endian blocks, 4-byte aligned in the file (the frame's
    headers end 28 + 54 bytes into its block, then 2 bytes of padding): a block start guessed
    inside it passes every check but the join."""
    return b".." + block("<", 6, struct.pack("<IIIII", 0, 0, 0, 4, 4) + b"fake") * count


def _same_at_every_cut(
    data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> list[PcapngWalk]:
    """Assert the mapped read equals the streamed one for every number of parts; the parallel
    walks it made."""
    expected = read_capture(io.BytesIO(data))
    path = tmp_path / "capture.pcapng"
    path.write_bytes(data)
    walks: list[PcapngWalk] = []
    walk = pcapng_walk.walk_pcapng

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        walks.append(walk(*args, **kwargs))
        return walks[-1]

    monkeypatch.setattr(reader, "walk_pcapng", spy)
    monkeypatch.setattr(reader, "DECODE_CHUNK", 40)  # marks every 5 packets, chunks of ≤ 40
    monkeypatch.setattr(reader, "_PARTS", 8)
    monkeypatch.setattr(pcapng_walk, "MIN_PART_BYTES", 1)
    for parts in PARTS:
        monkeypatch.setattr(pcapng_walk, "PARTS_PER_THREAD", parts)
        found = read_capture(path)
        assert found.info == expected.info, f"{parts} parts"
        for field in dataclasses.fields(expected.packets):
            assert np.array_equal(
                getattr(found.packets, field.name), getattr(expected.packets, field.name)
            ), (parts, field.name)
    return walks


@pytest.mark.parametrize("big", [False, True])
def test_a_run_of_packet_blocks_is_walked_in_parallel(
    big: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packets = _packets(500)
    data = pcapng_file([Section([Interface(), Interface(tsresol=9)], packets, big=big)])
    walks = _same_at_every_cut(data, tmp_path, monkeypatch)
    assert [w.rows for w in walks] == [500] * len(PARTS)  # every packet, without the serial walk


def test_old_packet_blocks_and_unknown_blocks_between_packets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opb = pcapng_file([Section([Interface()], _packets(200), packet_block="opb")])
    unknown = block("<", 0x00000BAD, b"custom" * 10)
    tail = b"".join(_epb("<", k, _frame(b"x" * (k % 50), k)) + unknown for k in range(200))
    walks = _same_at_every_cut(opb + unknown + tail, tmp_path, monkeypatch)
    assert [w.rows for w in walks] == [400] * len(PARTS)


def test_payloads_made_of_blocks_do_not_fool_the_joins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packets = [Packet(T0 + k, _frame(_fake_blocks(1 + k % 9), k)) for k in range(300)]
    walks = _same_at_every_cut(pcapng_file([Section([Interface()], packets)]), tmp_path,
                               monkeypatch)  # fmt: skip
    assert min(w.rows for w in walks) < 300  # some guesses were fooled: the joins caught them


@pytest.mark.parametrize(
    "middle",
    [
        "section",  # a second section, in the other byte order, with its own interfaces
        "interface",  # a new interface
        "spb",  # a simple packet block: the previous packet's time
        "comment",  # a packet comment: its frame number
        "corrupt",  # a trailing length that differs: the read stops there, with a warning
        "cut",  # the file ends inside a block
    ],
)
def test_what_only_the_serial_walk_reads_is_read_by_it(
    middle: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = pcapng_file([Section([Interface()], _packets(150))])
    after = b"".join(_epb("<", 1000 + k, _frame(b"y" * (k % 70), k)) for k in range(150))
    if middle == "section":
        more = pcapng_file([Section([Interface(link_type=101)], _packets(50, seed=1), big=True)])
        data = head + more
    elif middle == "interface":
        idb = block("<", 1, struct.pack("<HHI", 1, 0, 0))
        data = head + idb + b"".join(
            _epb("<", k, _frame(b"z", k), interface=k % 2) for k in range(100)
        )  # fmt: skip
    elif middle == "spb":
        frame = _frame(b"s" * 10, 7)
        spb = block("<", 3, struct.pack("<I", len(frame)) + frame)
        data = head + spb + after
    elif middle == "comment":
        comment = struct.pack("<HH", 1, 4) + b"late" + struct.pack("<HH", 0, 0)
        data = head + _epb("<", 999, _frame(b"c", 1), options=comment) + after
    elif middle == "corrupt":
        bad = bytearray(_epb("<", 999, _frame(b"c", 1)))
        bad[-4:] = struct.pack("<I", len(bad) + 4)
        data = head + bytes(bad) + after
    else:
        data = head + after[: len(after) // 2 + 3]
    walks = _same_at_every_cut(data, tmp_path, monkeypatch)
    if middle == "cut":  # every complete block is in the parallel run
        assert {w.rows for w in walks} == {read_capture(io.BytesIO(data)).info.packets}
    else:  # the parallel run ends where the serial walk is needed
        assert all(w.rows <= 150 for w in walks)
        assert max(w.rows for w in walks) == 150


def test_a_packet_after_a_simple_packet_block_run_keeps_its_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an SPB after the parallel run takes the time of the run's last packet
    head = pcapng_file([Section([Interface()], _packets(120))])
    frame = _frame(b"s", 1)
    spb = block("<", 3, struct.pack("<I", len(frame)) + frame)
    data = head + spb
    _same_at_every_cut(data, tmp_path, monkeypatch)
    table = read_capture(io.BytesIO(data)).packets
    assert table.ts_ns[-1] == table.ts_ns[-2]


@pytest.mark.parametrize("count", [0, 1, 2, 9])
def test_tiny_files(count: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same_at_every_cut(pcapng_file([Section([Interface()], _packets(count))]), tmp_path,
                       monkeypatch)  # fmt: skip


def test_random_corruptions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = pcapng_file([Section([Interface()], _packets(120))])
    rng = np.random.default_rng(7)
    for _ in range(20):
        broken = bytearray(data)
        at = int(rng.integers(100, len(data)))
        broken[at : at + 4] = rng.integers(0, 256, 4, dtype=np.uint8).tobytes()
        try:
            expected = read_capture(io.BytesIO(bytes(broken)))
        except Exception as error:  # the serial read refuses it: so must the parallel one
            path = tmp_path / "broken.pcapng"
            path.write_bytes(bytes(broken))
            with pytest.raises(type(error)):
                read_capture(path)
            continue
        assert expected.info.packets <= 120
        _same_at_every_cut(bytes(broken), tmp_path, monkeypatch)
