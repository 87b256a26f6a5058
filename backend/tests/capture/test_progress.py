"""``read_capture(..., progress=)``: bytes of the source done/total, few calls, ending at 100%.

Windows and the 8 MiB minimum step are shrunk so the small shared captures give many windows.
"""

from __future__ import annotations

import gzip
import io
import itertools
from pathlib import Path

import pytest

from tcplens.capture import read_capture
from tests.capture.shared_captures import LAB, PRACTICAL, require

LAB_PCAP = LAB / "rcvbuf_locked_download.pcap"  # 845 kB: ~200 windows of 4 KiB
PRACTICAL_PCAPNG = PRACTICAL / "http_espn_fail.pcapng"


def _needs(path: Path) -> Path:
    require(path)
    return path


@pytest.fixture
def small_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcplens.capture import buffers, progress, reader

    monkeypatch.setattr(reader, "DECODE_CHUNK", 16)  # a mapped pcap is one window
    monkeypatch.setattr(buffers, "WINDOW", 4096)
    monkeypatch.setattr(buffers, "STREAM_BUFFER", 4096)
    monkeypatch.setattr(progress, "MIN_STEP", 1024)


def _read_with_progress(source: object) -> tuple[int, list[tuple[int, int]]]:
    calls: list[tuple[int, int]] = []
    capture = read_capture(source, progress=lambda done, total: calls.append((done, total)))  # type: ignore[arg-type]
    return capture.info.packets, calls


def _assert_well_formed(calls: list[tuple[int, int]], total: int) -> None:
    """Monotonic, within the total, at most one call per 1% (+ the final one), ends at 100%."""
    assert calls[-1] == (total, total)
    done = [d for d, _ in calls]
    assert done == sorted(done)
    assert all(t == total and 0 < d <= total for d, t in calls)
    assert len(calls) <= 101
    steps = [b - a for a, b in itertools.pairwise(done[:-1])]  # the last may be a short one
    assert all(step >= total // 100 for step in steps)


@pytest.mark.usefixtures("small_steps")
@pytest.mark.parametrize("path", [LAB_PCAP, PRACTICAL_PCAPNG], ids=["pcap", "pcapng"])
def test_mapped_file_reports_its_bytes(path: Path) -> None:
    path = _needs(path)
    packets, calls = _read_with_progress(path)
    size = path.stat().st_size
    _assert_well_formed(calls, size)
    assert len(calls) >= 20  # progress in between, not only the final call
    assert packets == read_capture(path).info.packets  # the callback changes nothing read


@pytest.mark.usefixtures("small_steps")
def test_gzip_reports_compressed_bytes(tmp_path: Path) -> None:
    data = _needs(LAB_PCAP).read_bytes()
    packed = tmp_path / "capture.pcap.gz"
    packed.write_bytes(gzip.compress(data))
    packets, calls = _read_with_progress(packed)
    _assert_well_formed(calls, packed.stat().st_size)
    assert len(calls) >= 3  # the compressed bytes are taken 64 KiB at a time
    assert packets == read_capture(LAB_PCAP).info.packets


@pytest.mark.usefixtures("small_steps")
def test_stream_from_its_position(tmp_path: Path) -> None:
    """A caller's stream counts from where it stands, as a file or in memory."""
    data = _needs(PRACTICAL_PCAPNG).read_bytes()
    _, calls = _read_with_progress(io.BytesIO(data))
    _assert_well_formed(calls, len(data))
    path = tmp_path / "prefixed"
    path.write_bytes(b"junk" * 25 + data)
    with path.open("rb") as stream:
        stream.seek(100)
        _, calls = _read_with_progress(stream)
    _assert_well_formed(calls, len(data))


class _Pipe(io.RawIOBase):
    """A stream that cannot seek, as stdin from a pipe: its size is not known."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        return self._data.readinto(buffer)


@pytest.mark.usefixtures("small_steps")
def test_unknown_size_reports_zero_total_then_what_was_read() -> None:
    data = _needs(LAB_PCAP).read_bytes()
    _, calls = _read_with_progress(_Pipe(data))
    assert calls[-1] == (len(data), len(data))
    assert all(total == 0 for _, total in calls[:-1])
    assert len(calls) > 2
    done = [d for d, _ in calls]
    assert done == sorted(done)


def test_default_steps_call_once_for_a_small_file() -> None:
    """Below 8 MiB only the final call: never per window, let alone per packet."""
    path = _needs(LAB_PCAP)
    _, calls = _read_with_progress(path)
    size = path.stat().st_size
    assert calls == [(size, size)]


def test_an_exception_from_the_callback_stops_the_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """How a job is cancelled: the callback raises, the read stops and the exception propagates."""
    from tcplens.capture import buffers, progress, reader

    monkeypatch.setattr(reader, "DECODE_CHUNK", 16)
    monkeypatch.setattr(buffers, "WINDOW", 4096)
    monkeypatch.setattr(progress, "MIN_STEP", 1024)

    class Cancelled(Exception):
        pass

    seen: list[int] = []

    def cancel(done: int, total: int) -> None:
        seen.append(done)
        raise Cancelled

    with pytest.raises(Cancelled):
        read_capture(_needs(LAB_PCAP), progress=cancel)
    assert len(seen) == 1 and seen[0] < LAB_PCAP.stat().st_size
