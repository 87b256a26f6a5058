"""A capture mapped ahead (``MappedAhead``): its pages are mapped in by the helper, and reading it
gives what reading its path gives."""

from __future__ import annotations

import dataclasses
import gzip
import mmap
import os
from pathlib import Path

import numpy as np
import pytest

from tcplens.capture import MappedAhead, read_capture
from tcplens.capture import ahead as ahead_module
from tcplens.capture.table import Capture
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
