"""The diagnosis on the lab's own captures (the CI subset, made in this run): it leads with the
factor the scenario was built to show, and a healthy control gets no problem finding."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from lab.catalogue import by_name
from lab.runner import LabCapture, make_capture

from tcplens.capture import read_capture
from tcplens.diagnosis.engine import diagnose
from tcplens.tcp.analyze import analyze_tcp

pytestmark = pytest.mark.lab


def test_diagnosis_leads_with_the_expected_factor(lab_capture: LabCapture) -> None:
    capture = read_capture(lab_capture.path)
    findings = diagnose(capture, analyze_tcp(capture.packets)).findings
    summary = [(f.code, f.severity, round(f.time_lost_s or 0.0, 3)) for f in findings]
    assert findings, f"{lab_capture.scenario.name}: no finding"
    assert findings[0].factor == lab_capture.expected_primary_factor, summary
    if lab_capture.scenario.healthy:
        problems = [f.code for f in findings if f.severity in ("high", "medium")]
        assert problems == [], summary


def test_a_capture_started_mid_connection_infers_the_window_scale(lab_dir: Path) -> None:
    """The issue's example: a 64 KB SO_RCVBUF, tcpdump started 1 s into the transfer (no
    handshake, so no window scale in the capture), captured at both ends in one run: both lead
    with the receiver's window, say the scale was inferred, and never state a 0-byte window."""
    sc = dataclasses.replace(by_name("rwnd_rcvbuf64k_get_40ms_midconn"), heldout=False)
    made = make_capture(sc, lab_dir)
    assert made.entry["handshake_captured"] is False
    for path in (made.path, lab_dir / made.entry["other_end"]["file"]):
        capture = read_capture(path)
        analysis = analyze_tcp(capture.packets)
        assert (analysis.flows.syn_ns < 0).all()  # the handshake is not in the capture
        findings = diagnose(capture, analysis).findings
        first = findings[0]
        assert first.factor == "receiver_window", [(f.code, f.severity) for f in findings]
        assert "was inferred from the data" in first.summary
        assert first.evidence.extra["window_scale_inferred"] is True
        # SO_RCVBUF=65536, doubled by the kernel: the window the sender filled is 64-128 KB
        assert 64 * 1024 <= first.evidence.extra["advertised_window_bytes"] <= 128 * 1024
        assert first.evidence.extra["confidence"]["handshake_captured"] is False
        assert first.evidence.extra["confidence"]["inferred"] == ["window_scale"]
        assert not any("0 bytes" in f.summary for f in findings)
