"""``tcplens analyze --json --events``: the events' compiled encoding writes exactly the bytes
``json.dumps`` writes for DESIGN.md's ``{"frame": int, "flow": int, "kinds": [EVENT]}`` dicts."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.cli import main
from tcplens.report import analyse_capture, write_report
from tcplens.report_events import event_rows, write_events
from tcplens.tcp.model import EVENT_NAMES, Segments, event_names
from tests.capture.shared_captures import LAB, PRACTICAL, TCPDUMP_TESTS, require, shared_files

# Real captures whose events, together, have 10 of the 14 kinds and up to 5 kinds' masks in one
# capture (lab: loss, reordering, window full and updates; practical: keep-alives and zero
# windows; tcpdump-tests: an ACK of a segment the capture lost), and captures without events.
TCPDUMP_WITH_EVENTS = (
    "bgp-enhanced-route-refresh-subtype.pcapng", "kday4.pcap", "mptcp-v0.pcap", "pptp.pcap",
)  # fmt: skip


def compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def reference_events(segments: Segments) -> list[dict[str, Any]]:
    """DESIGN.md's events as dicts, the plain way: every segment with an event, by frame."""
    flow = segments.flow_column()
    rows = sorted(np.flatnonzero(segments.events).tolist(), key=lambda r: int(segments.frame[r]))
    return [
        {
            "frame": int(segments.frame[r]),
            "flow": int(flow[r]) + 1,
            "kinds": event_names(int(segments.events[r])),
        }
        for r in rows
    ]


def report_text(report: dict[str, Any], segments: Segments | None = None) -> str:
    out = io.BytesIO()
    write_report(out.write, report, segments)
    return out.getvalue().decode()


def events_text(rows: tuple[np.ndarray, np.ndarray, np.ndarray], chunk: int) -> str:
    out = io.BytesIO()
    write_events(out.write, *rows, chunk_events=chunk)
    return out.getvalue().decode()


def test_real_captures_events_are_json_dumps_of_the_event_dicts() -> None:
    require(LAB)
    require(PRACTICAL)
    require(TCPDUMP_TESTS)
    captures = [
        *shared_files(LAB, "*.pcap"),
        *shared_files(PRACTICAL),
        *(TCPDUMP_TESTS / name for name in TCPDUMP_WITH_EVENTS),
    ]
    kinds: set[str] = set()
    without_events = 0
    for path in captures:
        analysis, report = analyse_capture(read_capture(str(path)))
        events = reference_events(analysis.segments)
        expected = compact({**report, "events": events}) + "\n"
        assert report_text(report, analysis.segments) == expected, path.name
        assert report_text(report) == compact(report) + "\n", path.name
        # chunk boundaries anywhere: a chunk of 1, of 7 events, all in one
        rows = event_rows(analysis.segments)
        for chunk in (1, 7, 1 << 16):
            assert events_text(rows, chunk) == compact(events), path.name
        kinds.update(k for e in events for k in e["kinds"])
        without_events += not events
    assert {
        "retransmission", "fast_retransmission", "out_of_order", "ack_lost_segment",
        "duplicate_ack", "zero_window", "window_full", "window_update",
        "keep_alive", "keep_alive_ack",
    } <= kinds  # fmt: skip
    assert without_events >= 5


def test_every_mask_and_the_widest_numbers_are_written_as_json_dumps_writes_them() -> None:
    masks = np.arange(1, 1 << len(EVENT_NAMES), dtype=np.uint16)  # every combination of kinds
    edges = np.array([1, 9, 10, 99, 100, 65535, 10**9 - 1, 10**9, 2**32 - 1], np.uint32)
    frames = np.resize(edges, masks.size).astype(np.uint32)
    flows = np.resize(np.array([1, 9, 10, 12345, 2**31 - 1], np.int32), masks.size)
    expected = compact(
        [
            {"frame": f, "flow": fl, "kinds": event_names(m)}
            for f, fl, m in zip(frames.tolist(), flows.tolist(), masks.tolist(), strict=True)
        ]
    )
    for chunk in (1, 3, 1000, 1 << 16):
        assert events_text((frames, flows, masks), chunk) == expected


def test_no_events_is_an_empty_list() -> None:
    none = (np.zeros(0, np.uint32), np.zeros(0, np.int32), np.zeros(0, np.uint16))
    assert events_text(none, 1) == "[]"
    assert report_text({}) == "{}\n"


@pytest.mark.parametrize("binary", [True, False])
def test_the_command_prints_the_reference_bytes_with_or_without_a_binary_stdout(
    binary: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    # capsys' stdout has a binary buffer; a caller's StringIO has none (the text fallback)
    require(LAB)
    path = LAB / "bottleneck_download.pcap"
    analysis, report = analyse_capture(read_capture(str(path)))
    expected = compact({**report, "events": reference_events(analysis.segments)}) + "\n"
    assert len(reference_events(analysis.segments)) > 200
    argv = ["analyze", str(path), "--json", "--events"]
    if binary:
        assert main(argv) == 0
        out = capsys.readouterr().out
    else:
        with contextlib.redirect_stdout(io.StringIO()) as text:
            assert main(argv) == 0
        out = text.getvalue()
    assert out == expected
