"""``tcplens analyze CAPTURE --json [--events]``: the DESIGN.md contract, exit codes included."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import pytest

from tcplens.cli import main
from tests.capture.shared_captures import LAB, PRACTICAL, require

FLOW_KEYS = {
    "id", "client", "server", "start_s", "duration_s", "bytes", "packets", "handshake_rtt_ms",
    "rtt_ms", "retransmissions", "limiting_factor", "factor_shares", "timeline",
}  # fmt: skip


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["analyze", *argv]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1  # one JSON object on one line
    result: dict[str, Any] = json.loads(out)
    return result


def test_lossy_download_report(capsys: pytest.CaptureFixture[str]) -> None:
    require(LAB)
    report = run_json(capsys, str(LAB / "lossy_download.pcap"), "--json")
    assert set(report) == {"tcplens_version", "capture", "flows", "findings"}
    capture = report["capture"]
    assert capture == {
        "format": "pcap", "compression": None, "packets": 6567, "link_types": [1],
        "duration_s": 1.639441, "truncated": False, "warnings": [],
    }  # fmt: skip
    (flow,) = report["flows"]
    assert set(flow) >= FLOW_KEYS
    assert flow["id"] == 1
    assert flow["client"] == "10.77.0.1:49628" and flow["server"] == "10.77.0.2:80"
    assert flow["bytes"] == {"client_to_server": 67, "server_to_client": 5_000_044}
    assert flow["packets"] == 6567
    # Every data segment that re-sends sequence space: Wireshark flags only 4 `retransmission`
    # here and labels the 63 others `out_of_order` (its timing heuristic at a sender capture).
    assert flow["retransmissions"] == 67
    (loss,) = [f for f in report["findings"] if f["code"] == "packet-loss"]
    assert "retransmitted 67 of 3521 data segments" in loss["summary"]
    assert 30 <= flow["handshake_rtt_ms"] <= 32  # 30 ms lab RTT
    assert flow["vantage"] == "near_server"  # manifest: captured at the server
    assert flow["window_scale"] == {"client": 10, "server": 10}


def test_events_only_with_the_flag_and_in_wireshark_terms(
    capsys: pytest.CaptureFixture[str],
) -> None:
    require(PRACTICAL)
    report = run_json(capsys, str(PRACTICAL / "tcp_dupack.pcapng"), "--json", "--events")
    events = report["events"]
    assert events == [
        {"frame": 3, "flow": 1, "kinds": ["duplicate_ack"]},
        {"frame": 5, "flow": 1, "kinds": ["duplicate_ack"]},
        {"frame": 7, "flow": 1, "kinds": ["duplicate_ack"]},
        {"frame": 8, "flow": 1, "kinds": ["retransmission", "fast_retransmission"]},
    ]


def test_not_a_capture_exits_3_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello, this is not a capture\n")
    assert main(["analyze", str(bogus), "--json"]) == 3
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert main(["analyze", str(tmp_path / "missing.pcap"), "--json"]) == 3


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze"]) == 2
    assert main(["analyze", "x.pcap"]) == 2  # --json is the only output format
    assert "--json" in capsys.readouterr().err


def test_flow_without_handshake_shows_the_window_scale_as_unknown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    require(PRACTICAL)
    report = run_json(capsys, str(PRACTICAL / "tcp_dupack.pcapng"), "--json")
    (flow,) = report["flows"]
    assert flow["window_scale"] == {"client": None, "server": None}
    assert flow["handshake_rtt_ms"] is None


def _analyze_program(*argv: str, stdout: int | IO[bytes]) -> subprocess.CompletedProcess[bytes]:
    """``tcplens analyze`` as its own process: the one-shot path (quick exit) only runs there."""
    return subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "analyze", *argv],
        stdout=stdout, stderr=subprocess.PIPE, timeout=600, check=False,
    )  # fmt: skip


def test_the_program_writes_the_whole_report_to_a_file_and_to_a_pipe(tmp_path: Path) -> None:
    # The one-shot process leaves with os._exit after the report: nothing may be lost in a
    # buffer, whether stdout is a file (block-buffered) or a pipe.
    require(LAB)
    capture = str(LAB / "lossy_download.pcap")
    out_file = tmp_path / "report.json"
    with out_file.open("wb") as sink:
        to_file = _analyze_program(capture, "--json", "--events", stdout=sink)
    to_pipe = _analyze_program(capture, "--json", "--events", stdout=subprocess.PIPE)
    assert to_file.returncode == 0 and to_pipe.returncode == 0
    assert to_file.stderr == b"" and to_pipe.stderr == b""
    assert to_pipe.stdout == out_file.read_bytes()
    assert to_pipe.stdout.endswith(b"}\n") and to_pipe.stdout.count(b"\n") == 1
    report = json.loads(to_pipe.stdout)
    assert report["capture"]["packets"] == 6567 and len(report["events"]) > 60


def test_the_program_keeps_its_exit_codes_and_one_line_errors(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello, this is not a capture\n")
    unreadable = _analyze_program(str(bogus), "--json", stdout=subprocess.PIPE)
    assert unreadable.returncode == 3 and unreadable.stdout == b""
    assert unreadable.stderr.count(b"\n") == 1 and b"Traceback" not in unreadable.stderr
    assert unreadable.stderr.startswith(f"tcplens: {bogus}: ".encode())
    usage = _analyze_program(str(bogus), stdout=subprocess.PIPE)  # no --json
    assert usage.returncode == 2 and b"--json" in usage.stderr


def test_the_program_says_so_when_its_output_is_closed() -> None:
    # `tcplens analyze x.pcap --json >&-`: one line on stderr and exit 1, not a traceback
    require(PRACTICAL)
    closed = subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "analyze", str(PRACTICAL / "tcp_dupack.pcapng"),
         "--json"],
        stderr=subprocess.PIPE, timeout=600, check=False, preexec_fn=lambda: os.close(1),
    )  # fmt: skip
    assert closed.returncode == 1
    assert closed.stderr == b"tcplens: standard output is closed, nowhere to write the result\n"


def test_the_program_exits_0_when_the_reader_leaves_early() -> None:
    # `tcplens analyze ... | head -c 100`: the pipe closes before the report is written
    require(LAB)
    program = subprocess.Popen(
        [sys.executable, "-m", "tcplens.cli", "analyze", str(LAB / "lossy_download.pcap"),
         "--json", "--events"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert program.stdout is not None and program.stderr is not None
    assert program.stdout.read(100).startswith(b'{"tcplens_version":')
    program.stdout.close()
    assert program.wait(timeout=600) == 0
    assert program.stderr.read() == b""


def test_the_program_reads_a_large_capture_as_a_call_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The program runs as a one-shot process (tcplens.runtime.one_shot), a call from Python not.
    require(LAB)
    data = (LAB / "lossy_download.pcap").read_bytes()
    records, pos = [], 24
    while pos < len(data):
        sec, usec, incl, orig = struct.unpack_from("<IIII", data, pos)
        records.append((sec, usec, incl, orig, data[pos + 16 : pos + 16 + incl]))
        pos += 16 + incl
    large = tmp_path / "repeated.pcap"
    with large.open("wb") as out:
        out.write(data[:24])
        for copy in range(14):  # one after the other in time: 9.6 MB
            for sec, usec, incl, orig, frame in records:
                out.write(struct.pack("<IIII", sec + 10 * copy, usec, incl, orig) + frame)
    program = _analyze_program(str(large), "--json", "--events", stdout=subprocess.PIPE)
    assert program.returncode == 0 and program.stderr == b""
    assert main(["analyze", str(large), "--json", "--events"]) == 0
    assert program.stdout.decode() == capsys.readouterr().out
    report = json.loads(program.stdout)
    assert report["capture"]["packets"] == 14 * 6567
