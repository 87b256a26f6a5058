"""The capture vantage against the lab manifest."""

from __future__ import annotations

import json

from tcplens.capture import read_capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import VANTAGE_NAMES
from tests.capture.shared_captures import LAB, require


def test_vantage_matches_where_the_lab_captured() -> None:
    require(LAB)
    manifest = json.loads((LAB / "manifest.json").read_text())
    expected = {"client": "near_client", "server": "near_server"}
    for name, facts in manifest.items():
        a = analyze_tcp(read_capture(LAB / f"{name}.pcap").packets)
        got = {VANTAGE_NAMES[v] for v in a.flows.vantage.tolist()}
        assert got == {expected[facts["capture_at"]]}, name
