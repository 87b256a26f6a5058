"""A capture mapped ahead (``MappedAhead``): its pages are mapped in by the helper, and reading it
gives what reading its path gives."""

from __future__ import annotations

import dataclasses
import gzip
import mmap
import os
import threading
from pathlib import Path

import numpy as np
import pytest

from tcplens.capture import MappedAhead, memory, read_capture
from tcplens.capture import ahead as ahead_module
from tcplens.capture.table import Capture, dense_row_bytes
from tests.capture.faults import faults_writing
from tests.capture.shared_captures import SHARED_CAPTURES, require


def _same(one: Capture, other: Capture) -> None:
    assert one.info == other.info
    for field in dataclasses.fields(one.packets):
        assert np.array_equal(getattr(one.packets, field.name), getattr(other.packets, field.name))


def _resident_kib(address: int) -> int:
    """Rss of the mapping that starts at ``address`` (/proc/self/smaps)."""
    inside = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[0] in "0123456789abcdef" and "-" in line.split()[0]:
            inside = int(line.split("-")[0], 16) == address
        elif inside and line.startswith("Rss:"):
            return int(line.split()[1])
    raise AssertionError("mapping not found")


@pytest.mark.parametrize(
    "name", ["lab/rwnd_small_upload.pcap", "corpus/practical-packet-analysis/http_espn_fail.pcapng"]
)
def test_read_mapped_ahead_equals_read_of_the_path(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = SHARED_CAPTURES / name
    require(path)
    monkeypatch.setattr(ahead_module, "MIN_BYTES", 0)
    monkeypatch.setattr(ahead_module, "STEP_PAGES", 3)  # several steps even for a small file
    ahead = MappedAhead.start(path)
    assert ahead is not None
    _same(read_capture(ahead), read_capture(path))
    assert ahead.file.closed  # the read owns the file once it has it
    with pytest.raises(ValueError, match="already taken"):
        ahead.take()


def test_the_helper_maps_every_page_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "large.pcap"
    source = SHARED_CAPTURES / "lab/rwnd_small_upload.pcap"
    require(source)
    data = source.read_bytes()
    # the first records again and again: a valid pcap of 256 pages or more (fault-around maps 16 at a time)
    records = data[24:]
    path.write_bytes(data[:24] + records * (-(-256 * mmap.PAGESIZE // len(records))))
    monkeypatch.setattr(ahead_module, "MIN_BYTES", 0)
    monkeypatch.setattr(ahead_module, "STEP_PAGES", 64)
    ahead = MappedAhead.start(path)
    assert ahead is not None
    ahead._thread.join()  # the helper's whole run, with nothing taking the mapping first
    mapping = ahead.take()
    view = np.frombuffer(mapping, np.uint8)
    address, size = view.ctypes.data, view.shape[0]
    assert _resident_kib(address) * 1024 == -(-size // mmap.PAGESIZE) * mmap.PAGESIZE
    del view
    mapping.close()
    ahead.file.close()


def test_what_is_not_mapped_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = SHARED_CAPTURES / "lab/rwnd_small_upload.pcap"
    require(source)
    assert MappedAhead.start(source) is None  # smaller than MIN_BYTES: opened as usual
    monkeypatch.setattr(ahead_module, "MIN_BYTES", 0)
    compressed = tmp_path / "capture.pcap.gz"
    compressed.write_bytes(gzip.compress(source.read_bytes()))
    assert MappedAhead.start(compressed) is None  # read as a stream, never mapped
    text = tmp_path / "notes.txt"
    text.write_text("not a capture at all")
    assert MappedAhead.start(text) is None
    assert MappedAhead.start(tmp_path / "missing.pcap") is None  # read_capture says why
    assert MappedAhead.start(tmp_path) is None  # a folder
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert MappedAhead.start(fifo) is None  # at once: no writer is waited for


def test_a_file_that_grew_after_it_was_mapped_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = SHARED_CAPTURES / "lab/rwnd_small_upload.pcap"
    require(source)
    data = source.read_bytes()
    path = tmp_path / "growing.pcap"
    half = len(data) // 2
    path.write_bytes(data[:half])  # cut inside a record
    monkeypatch.setattr(ahead_module, "MIN_BYTES", 0)
    ahead = MappedAhead.start(path)
    assert ahead is not None
    with path.open("ab") as file:
        file.write(data[half:])
    _same(read_capture(ahead), read_capture(source))


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("lab/lossy_download.pcap", "pcap"),
        ("corpus/practical-packet-analysis/http_espn_fail.pcapng", "pcapng"),
    ],
)
def test_the_packets_estimate_sizes_the_memory_made_ahead(
    name: str, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = SHARED_CAPTURES / name
    require(path)
    packets = read_capture(path).info.packets
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        monkeypatch.setattr(ahead_module, "SAMPLE_RECORDS", 10**6)
        whole = ahead_module.packets_estimate(
            data, kind
        )  # every record sampled: the count, 5 % more
        assert whole in (int(packets * 1.05) + 1, int(packets * 1.05))
        monkeypatch.setattr(ahead_module, "SAMPLE_RECORDS", 64)
        sampled = ahead_module.packets_estimate(data, kind)  # from the first 64 records
    assert sampled is not None
    assert 0.3 * packets < sampled < 3 * packets


def test_no_packets_estimate_for_what_does_not_parse(tmp_path: Path) -> None:
    path = tmp_path / "bad.pcapng"
    path.write_bytes(b"\x0a\x0d\x0d\x0a" + b"\x05\x00\x00\x00" + b"\x4d\x3c\x2b\x1a" + bytes(20))
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        assert ahead_module.packets_estimate(data, "pcapng") is None  # a block length under 12
    path.write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(20))  # a pcap header of version 0
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        assert ahead_module.packets_estimate(data, "pcap") is None


@pytest.fixture
def small_capture(monkeypatch: pytest.MonkeyPatch) -> Path:
    """A lab capture, mapped ahead although it is small."""
    source = SHARED_CAPTURES / "lab/lossy_download.pcap"
    require(source)
    monkeypatch.setattr(ahead_module, "MIN_BYTES", 0)
    return source


def test_the_table_takes_the_pages_made_ahead(
    small_capture: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = small_capture
    taken: list[int] = []
    take_into = memory.WarmReserve.take_into

    def counted(self: memory.WarmReserve, address: int, nbytes: int) -> int:
        taken.append(take_into(self, address, nbytes))
        return taken[-1]

    monkeypatch.setattr(memory.WarmReserve, "take_into", counted)
    ahead = MappedAhead.start(source)
    assert ahead is not None
    ahead._thread.join()  # file pages, then the reserve, all touched before the read
    capture = read_capture(ahead)
    _same(capture, read_capture(source))
    # both blocks of dense columns (done after the flows, after the events) came in touched
    dense = len(capture.packets) * dense_row_bytes(pcap=True)
    assert len(taken) == 2 and dense <= sum(taken) <= dense + 2 * 64 * 21 + 2 * mmap.PAGESIZE
    assert memory._warm is None  # the rest of the reserve was let go after the read


def test_taking_the_mapping_does_not_wait_for_the_reserve_step_in_progress(
    small_capture: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started, finish = threading.Event(), threading.Event()

    def one_slow_step(self: memory.WarmReserve, step: int) -> None:
        with self._touching:  # the whole reserve as one step, which ends when the test says
            started.set()
            assert finish.wait(timeout=30)
            memory._raw_view(self._address, self.nbytes)[:: mmap.PAGESIZE] = 0
            self.warm = self.nbytes

    monkeypatch.setattr(memory.WarmReserve, "touch", one_slow_step)
    ahead = MappedAhead.start(small_capture)
    assert ahead is not None and started.wait(timeout=30)
    taking = threading.Thread(target=ahead.take)
    taking.start()
    taking.join(timeout=10)
    assert not taking.is_alive()  # the mapping was handed over while the step went on
    finish.set()
    ahead._thread.join()
    reserve = memory._warm
    assert reserve is not None and reserve.warm == reserve.nbytes  # the step's pages, all kept
    try:
        dense = memory.anonymous_memory(reserve.nbytes, dense=True)  # the table, mapped after
        assert reserve.left()[1] == 0
        assert faults_writing(dense) <= 2  # its pages came in resident (one fault a page else)
    finally:
        memory.release_warm_reserve()
        ahead.file.close()


def test_a_reserve_made_while_the_reader_takes_over_is_stopped_before_the_read(
    small_capture: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    estimating, estimated = threading.Event(), threading.Event()
    estimate = ahead_module.packets_estimate

    def slow_estimate(data: mmap.mmap, kind: str) -> int | None:
        estimating.set()
        assert estimated.wait(timeout=30)  # the reader asks for the mapping meanwhile
        return estimate(data, kind)

    monkeypatch.setattr(ahead_module, "packets_estimate", slow_estimate)
    ahead = MappedAhead.start(small_capture)
    assert ahead is not None and estimating.wait(timeout=30)
    taking = threading.Thread(target=ahead.take)
    taking.start()
    taking.join(timeout=0.2)
    assert taking.is_alive()  # the hand-over waits for the estimate and the reserve
    estimated.set()
    taking.join(timeout=10)
    assert not taking.is_alive()
    reserve = memory._warm  # made before the hand-over ended, and stopped by it
    ahead._thread.join()  # (at most its step in progress touched)
    try:
        assert reserve is not None and reserve._closed
        assert memory._warm is reserve  # none made after: the read's release finds this one
    finally:
        memory.release_warm_reserve()
        ahead.file.close()
    assert memory._warm is None
