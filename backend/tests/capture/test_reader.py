"""The reader as a whole: errors for what is not a capture, and the robustness corpus.

Every file of tcpdump's regression captures (many deliberately malformed) is either read or
refused with a ``CaptureError``. The files are read in one child process that reports after each
file, so a hang is caught and named instead of stalling the suite; how long each file takes is
measured by ``bench/bench_reader.py`` (a time limit here would depend on the machine's load).
"""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tcplens.capture import CaptureError, CaptureReadError, NotACaptureError, read_capture
from tests.capture.shared_captures import TCPDUMP_TESTS, require, shared_files

# no answer for this long is a hang (a loop that never ends), not a slow read
HANG_SECONDS = 300.0

_READ_EACH = r"""
import json, sys, time
from tcplens.capture import CaptureError, read_capture
for line in sys.stdin:
    path = line.rstrip("\n")
    started = time.perf_counter()
    try:
        capture = read_capture(path)
        outcome = {"read": capture.info.packets, "warnings": len(capture.info.warnings)}
    except CaptureError as error:
        outcome = {"refused": error.code, "message": str(error)}
    except BaseException as error:
        outcome = {"crashed": f"{type(error).__name__}: {error}"}
    outcome["seconds"] = time.perf_counter() - started  # (bench_reader reads this)
    print(json.dumps(outcome), flush=True)
"""


def test_not_a_capture_is_refused_in_one_sentence() -> None:
    with pytest.raises(NotACaptureError) as error:
        read_capture(io.BytesIO(b"<html><body>hello</body></html>"))
    assert error.value.code == "not_a_capture"
    assert str(error.value) == "The file is not a packet capture (neither pcap nor pcapng)."


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.pcap"
    path.write_bytes(b"")
    with pytest.raises(NotACaptureError, match="The file is empty"):
        read_capture(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CaptureReadError) as error:
        read_capture(tmp_path / "nope.pcap")
    assert error.value.code == "unreadable"
    assert "No such file" in str(error.value)


def test_every_error_is_a_capture_error_with_a_code() -> None:
    for cls in CaptureError.__subclasses__():
        assert cls.code != CaptureError.code
        assert cls.__doc__


def test_tcpdump_corpus_is_read_or_refused() -> None:
    require(TCPDUMP_TESTS)
    files = shared_files(TCPDUMP_TESTS)
    assert len(files) > 300
    child = subprocess.Popen(
        [sys.executable, "-c", _READ_EACH],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    outcomes: dict[str, dict[str, Any]] = {}
    try:
        # warm-up: loading numba and the kernels (compiling them, on a fresh checkout) is not
        # the time a file takes to read
        child.stdin.write(f"{files[0]}\n")
        child.stdin.flush()
        assert _read_line(child, HANG_SECONDS), "the reader did not start"
        for path in files:
            child.stdin.write(f"{path}\n")
            child.stdin.flush()
            started = time.monotonic()
            line = _read_line(child, HANG_SECONDS)
            assert line, f"{path.name}: no answer within {time.monotonic() - started:.0f} s"
            outcomes[path.name] = json.loads(line)
    finally:
        child.kill()
        child.wait()
    crashed = {name: o["crashed"] for name, o in outcomes.items() if "crashed" in o}
    assert not crashed
    read = [name for name, o in outcomes.items() if "read" in o]
    assert len(read) > 300  # almost all of them are captures we can read
    # facts about a few of them, as tshark counts their frames
    assert outcomes["802.1ad_QinQ.pcap"]["read"] == 2
    assert outcomes["LINKTYPE_IPV4.pcap"]["read"] == 1
    assert outcomes["empty.pcapng"]["read"] == 0


def _read_line(child: subprocess.Popen[str], seconds: float) -> str:
    import selectors

    assert child.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(child.stdout, selectors.EVENT_READ)
        if not selector.select(timeout=seconds):
            return ""
    return child.stdout.readline()


@pytest.mark.parametrize(
    "name", ["lab/rwnd_small_upload.pcap", "corpus/practical-packet-analysis/http_espn_fail.pcapng"]
)
def test_small_windows_give_the_same_table(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records cut by window and buffer ends are carried over, whatever the window size.

    The same for the chunks of rows decoded at a time (odd-sized, so no chunk is aligned), and
    for a pcap index sized too small at first (it grows).
    """
    from tcplens.capture import buffers, reader
    from tests.capture.shared_captures import SHARED_CAPTURES

    path = SHARED_CAPTURES / name
    require(path)
    whole = read_capture(path)
    monkeypatch.setattr(buffers, "WINDOW", 4096)  # smaller than many records: windows grow
    monkeypatch.setattr(buffers, "STREAM_BUFFER", 3000)
    monkeypatch.setattr(reader, "DECODE_CHUNK", 7)
    monkeypatch.setattr(reader, "_TYPICAL_RECORD", 1 << 20)
    monkeypatch.setattr(reader, "_INDEX_SLACK", 5)  # an index of 5 records at first: it grows
    mapped = read_capture(path)
    with path.open("rb") as stream:
        streamed = read_capture(stream)
    for other in (mapped, streamed):
        assert other.info == whole.info
        for field in dataclasses.fields(whole.packets):
            assert np.array_equal(
                getattr(other.packets, field.name), getattr(whole.packets, field.name)
            ), field.name
