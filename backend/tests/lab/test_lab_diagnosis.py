"""The diagnosis on the lab's own captures (the CI subset, made in this run): it leads with the
factor the scenario was built to show, and a healthy control gets no problem finding."""

from __future__ import annotations

import pytest
from lab.runner import LabCapture

from tcplens.capture import read_capture
from tcplens.diagnosis import diagnose
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
