"""Throughput/goodput bins, and the capture vantage against the lab manifest."""

from __future__ import annotations

import json

from tcplens.capture import read_capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import VANTAGE_NAMES
from tcplens.tcp.rate import rate_series
from tests.capture.shared_captures import LAB, require
from tests.tcp.synthetic import Seg, handshake, table


def test_retransmitted_bytes_count_for_throughput_not_goodput() -> None:
    segs = handshake()  # handshake at 0-10 ms
    segs += [Seg(20, True, 1, ack=1, length=1000), Seg(150, True, 1, ack=1, length=1000)]
    a = analyze_tcp(table(segs))
    r = rate_series(a.segments, a.flows.start_ns, 100_000_000)
    assert r.flow.tolist() == [0, 0]
    assert ((r.start_ns - a.flows.start_ns[0]) // 100_000_000).tolist() == [0, 1]
    assert r.throughput_bps.tolist() == [80_000.0, 80_000.0]
    assert r.goodput_bps.tolist() == [80_000.0, 0.0]


def test_vantage_matches_where_the_lab_captured() -> None:
    require(LAB)
    manifest = json.loads((LAB / "manifest.json").read_text())
    expected = {"client": "near_client", "server": "near_server"}
    for name, facts in manifest.items():
        a = analyze_tcp(read_capture(LAB / f"{name}.pcap").packets)
        got = {VANTAGE_NAMES[v] for v in a.flows.vantage.tolist()}
        assert got == {expected[facts["capture_at"]]}, name
