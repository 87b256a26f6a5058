"""The receiver-window finding sizes the window for the path's own capacity when the capture
measured it; when it did not, it assumes no rate and gives the window per reference rate."""

from __future__ import annotations

import dataclasses

import numpy as np

from tcplens.diagnosis.finding import Finding
from tcplens.diagnosis.rules import receiver_window_limited
from tcplens.diagnosis.transfer import Connection
from tests.diagnosis.synthetic import SEG, connection, context, transfer, window_rounds

RTT = 0.05


def path_limited(segments: int, gap: float, start: float) -> object:
    """A sender pacing one full segment every ``gap`` seconds into a bottleneck whose queue has
    doubled the round trip (every RTT sample 2 x RTT): the path is the limit, at SEG / gap."""
    t = start + np.arange(segments) * gap
    seq = 1 + np.arange(segments) * SEG
    ack_t = np.concatenate(([start - RTT / 2], t + 2 * RTT))
    ack = np.concatenate(([1], seq + SEG))
    tr = transfer(t, seq, np.full(segments, SEG), ack_t, ack, np.full(ack.size, 10**7),
                  rtt=(list(t + 2 * RTT), [2 * RTT] * segments))  # fmt: skip
    return dataclasses.replace(tr, flow=2)


def window_finding(conns: list[Connection]) -> Finding:
    findings = receiver_window_limited.detect(context(conns))
    assert len(findings) == 1
    return findings[0]


def test_window_sized_for_the_capacity_a_path_limited_flow_measured() -> None:
    # Flow 1: 8 segments per round trip, the window full every round (160 KB/s cap).
    # Flow 2, same hosts and direction: the path delivers a segment per ms (1 MB/s, 8 Mbit/s).
    rwnd = window_rounds(rounds=20, per_round=8, rtt=RTT)
    bulk = path_limited(segments=400, gap=0.001, start=2.0)
    c1 = connection(rwnd, RTT)
    c2 = dataclasses.replace(connection(bulk, RTT), flow=2)  # type: ignore[arg-type]
    f = window_finding([c1, c2])
    assert "The path itself delivered 8.0 Mbit/s when it was the limit (flow 2)" in f.summary
    # 1 MB/s x 50 ms: a 50 KB window, not the 100 Mbit/s reference's 625 KB
    assert "needs a window of about 49 KB" in f.summary
    assert f.evidence.extra["path_flow"] == 2
    assert f.evidence.extra["path_rate_bps"] == 8_000_000
    assert f.evidence.extra["needed_window_bytes"] == 50_000


def test_without_a_path_limited_flow_no_rate_is_assumed() -> None:
    rwnd = window_rounds(rounds=20, per_round=8, rtt=RTT)
    f = window_finding([connection(rwnd, RTT)])
    assert "To run at" not in f.summary
    assert "The capture does not show the path's capacity" in f.summary
    # 50 ms x 10 Mbit/s, 100 Mbit/s, 1 Gbit/s
    assert "61 KB for 10 Mbit/s, 610 KB for 100 Mbit/s, 6.0 MB for 1.0 Gbit/s" in f.summary
    assert "path_rate_bps" not in f.evidence.extra
    assert "needed_window_bytes" not in f.evidence.extra
