"""The flow ``timeline`` of the report (report.py): what the SPA's waterfall draws."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from tcplens.capture import read_capture
from tcplens.report import analyse_capture
from tests.capture.shared_captures import LAB, PRACTICAL, require


def flows_of(path: Any) -> list[dict[str, Any]]:
    flows: list[dict[str, Any]] = analyse_capture(read_capture(path))[1]["flows"]
    return flows


def test_each_new_connection_starts_with_its_handshake() -> None:
    """Lab no_reuse_uploads: 8 connections, each with its SYN as first packet (120 ms RTT)."""
    require(LAB)
    flows = flows_of(LAB / "no_reuse_uploads.pcap")
    assert len(flows) == 8
    for flow in flows:
        t = flow["timeline"]
        assert t["syn_s"] == flow["start_s"]
        done = t["handshake_done_s"] - t["syn_s"]
        assert done == pytest.approx(flow["handshake_rtt_ms"] / 1000, abs=0.001)
        assert 0.119 <= done <= 0.122
        # the upload starts after the handshake and ends before the connection does
        assert t["handshake_done_s"] <= t["first_data_s"] < t["last_data_s"]
        assert t["last_data_s"] <= flow["start_s"] + flow["duration_s"]
        assert t["idle_gaps_s"] == []  # the uploads run back to back
    # each connection's SYN follows the previous connection's last data (no reuse)
    for before, after in itertools.pairwise(flows):
        assert before["timeline"]["last_data_s"] < after["timeline"]["syn_s"]


def test_idle_gap_is_where_the_diagnosis_says_the_client_waited() -> None:
    """latency3 (Practical Packet Analysis): after the handshake the client took 1.3 s to send
    its request; the application-delay finding and the idle gap name the same interval."""
    require(PRACTICAL)
    path = PRACTICAL / "latency3.pcapng"
    _, report = analyse_capture(read_capture(path))
    (flow,) = report["flows"]
    t = flow["timeline"]
    assert t["syn_s"] == 0.0
    assert t["handshake_done_s"] == pytest.approx(0.038684, abs=1e-6)
    assert t["first_data_s"] == pytest.approx(1.383707, abs=1e-6)
    assert t["idle_gaps_s"] == [[0.038684, 1.383707]]
    (delay,) = [f for f in report["findings"] if f["code"] == "application-delay"]
    assert delay["evidence"]["time_ranges_s"] == t["idle_gaps_s"]


def test_short_waits_are_not_idle_and_unseen_handshakes_are_null() -> None:
    """Lab stop_and_wait_app waits ~8 ms between requests: below tcp's idle threshold (200 ms),
    so no gap. tcp_zerowindowdead starts mid-connection: no SYN, no handshake time."""
    require(LAB)
    (flow,) = flows_of(LAB / "stop_and_wait_app.pcap")
    assert flow["timeline"]["idle_gaps_s"] == []
    assert flow["timeline"]["first_data_s"] == pytest.approx(0.026256, abs=1e-6)
    require(PRACTICAL)
    (flow,) = flows_of(PRACTICAL / "tcp_zerowindowdead.pcapng")
    t = flow["timeline"]
    assert t["syn_s"] is None and t["handshake_done_s"] is None
    assert len(t["idle_gaps_s"]) == 3
    assert t["idle_gaps_s"][-1][1] == pytest.approx(23.731506, abs=1e-6)


def test_first_and_last_data_are_the_earliest_and_latest_payload_times() -> None:
    """min/max over each flow's packets with payload, not its first/last row: a capture's
    timestamps may go backwards. Checked against a per-flow loop with the capture's packet
    times scrambled before the analysis (the per-direction times come from the TCP analysis's
    Flows)."""
    import dataclasses

    import numpy as np

    from tcplens.report import timelines_json
    from tcplens.tcp.analyze import analyze_tcp

    require(LAB)
    packets = read_capture(LAB / "no_reuse_uploads.pcap").packets
    scrambled = np.random.default_rng(7).permutation(packets.ts_ns)
    analysis = analyze_tcp(dataclasses.replace(packets, ts_ns=scrambled))
    seg = analysis.segments
    timelines = timelines_json(analysis, 0)
    flows_with_data = 0
    for f, timeline in enumerate(timelines):
        rows = np.arange(seg.offsets[2 * f], seg.offsets[2 * f + 2])
        times = seg.time_ns[rows[seg.payload_len[rows] > 0]]
        if times.size == 0:
            assert timeline["first_data_s"] is None and timeline["last_data_s"] is None
            continue
        assert not np.all(np.diff(times) >= 0)  # the times do go backwards
        flows_with_data += 1
        assert timeline["first_data_s"] == round(int(times.min()) / 1e9, 6)
        assert timeline["last_data_s"] == round(int(times.max()) / 1e9, 6)
    assert flows_with_data == 8
