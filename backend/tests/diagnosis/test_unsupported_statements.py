"""No finding states what its capture cannot support (issue #26): on real-world captures from other
projects that used to produce such statements, and on the seed lab captures. The statements are
those ``make eval`` counts (e2e/lab/evaluate.py ``unsupported``): an RTT above 10 s, a window of 0
bytes outside a zero-window event, a round trip of 0.0 ms, more round trips than the active time
allows, time lost above the capture's duration, a rate the capture did not show, a window read
without its scale."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tcplens.capture import read_capture
from tcplens.report import analyse_capture
from tests.capture.shared_captures import LAB, PROJECT_ROOT, SHARED_CAPTURES, require

sys.path.insert(0, str(PROJECT_ROOT / "e2e"))
from lab.evaluate import unsupported

REAL_WORLD = SHARED_CAPTURES / "corpus" / "real-world"

# Each produced at least one unsupported statement before (make eval on 58bd883): time lost of
# 995 s in a 146 s capture and windows of 0 bytes (tls2), "to run at 100 Mbit/s" on a 6 Mbit/s
# capture (espn), stop-and-wait "round trips of 0.0 ms" and 783 s lost in 6.5 s (echo), a round
# trip of 27 s (bitcoin), a window without its scale (pcapng-example).
CAPTURES = [
    REAL_WORLD / "pcapplusplus_tls2.pcap",
    REAL_WORLD / "chrissanders_http_espn.pcapng",
    REAL_WORLD / "zeek_echo-connections.pcap.gz",
    REAL_WORLD / "ndpi_bitcoin.pcap",
    REAL_WORLD / "pcapplusplus_pcapng-example.pcapng",
    REAL_WORLD / "zeek_modbus_modbusBig.pcap",
    LAB / "rcvbuf_locked_download.pcap",
    LAB / "zero_window_slow_reader.pcap",
]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_no_finding_states_what_the_capture_cannot_support(path: Path) -> None:
    require(path)
    analysis, report = analyse_capture(read_capture(path))
    findings = [
        statement for statement in unsupported(report, analysis) if "flow " not in statement[:5]
    ]
    assert findings == []
    duration = report["capture"]["duration_s"]
    for finding in report["findings"]:
        lost = finding["time_lost_s"] or 0.0
        assert lost <= duration + 1e-6, finding["code"]
        per_flow = finding["evidence"]["flow_time_lost_s"]
        assert set(per_flow) == {str(f) for f in finding["flows"]}
        assert all(0.0 <= s <= lost + 1e-6 for s in per_flow.values())
        confidence = finding["evidence"]["confidence"]
        assert set(confidence) == {
            "capture_point", "handshake_captured", "inferred", "packets_missing",
            "timestamps_backwards", "capture_truncated", "snaplen", "packets_cut", "clock_jumps",
        }  # fmt: skip


def test_the_window_finding_gives_the_window_per_rate_when_no_rate_was_measured() -> None:
    require(LAB)
    _, report = analyse_capture(read_capture(LAB / "rcvbuf_locked_download.pcap"))
    [window] = [f for f in report["findings"] if f["code"] == "receiver-window-limited"]
    assert "To run at" not in window["summary"]
    assert "The capture does not show the path's capacity" in window["summary"]
    assert "for 10 Mbit/s" in window["summary"] and "for 1.0 Gbit/s" in window["summary"]
    assert window["evidence"]["confidence"]["handshake_captured"] is True
    assert window["evidence"]["confidence"]["inferred"] == []


def test_findings_are_ordered_by_severity_then_time_lost() -> None:
    require(REAL_WORLD)
    rank = {"high": 0, "medium": 1, "low": 2, "info": 3}
    for path in CAPTURES[:3]:
        _, report = analyse_capture(read_capture(path))
        keys = [(rank[f["severity"]], -(f["time_lost_s"] or 0.0)) for f in report["findings"]]
        assert keys == sorted(keys), path.name


def test_sequential_requests_are_turns_not_a_small_send_buffer() -> None:
    """1,000 sequential HTTP GETs on loopback (13 µs round trips, 0.6 ms a turn): request and
    response turns, not "Sender's buffer too small: only 853 bytes in flight"."""
    path = REAL_WORLD / "zeek_http_1000-requests-one-dropped-response.pcap.gz"
    require(path)
    _, report = analyse_capture(read_capture(path))
    codes = [f["code"] for f in report["findings"]]
    assert "sender-buffer-limited" not in codes
    [first] = report["findings"][:1]
    assert first["code"] == "round-trip-bound"
    assert "1000 request/response exchanges" in first["summary"]
    assert "round trips of 13 µs" in first["summary"]
    assert "about 0.6 ms a turn" in first["summary"]
