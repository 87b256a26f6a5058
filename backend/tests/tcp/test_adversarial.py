"""Adversarial captures (issue 31): each analysed twice gives the same report, with the facts its
shape implies, and ten times the packets take about ten times as long, never a hundred.

The time bound is a ratio measured in the same run (best of a few runs of each size, after a
warm-up), not an absolute time, and of CPU time (this process's threads), which the other
tenants of a loaded machine move far less than wall time: 25 leaves room for noise and the
fixed costs of the small run while a quadratic pass (~100) fails it. The
per-packet times at 10^4 to 10^6 packets are ``bench/bench_adversarial.py``'s.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tcplens.capture import read_capture
from tcplens.report import analyse_capture
from tests.tcp.adversarial import MSS, SHAPES

SMALL = 10_000
GROWTH = 10
RATIO_BOUND = 25


def _analyse(path: Path) -> tuple[float, dict[str, Any]]:
    started = time.process_time()
    _analysis, report = analyse_capture(read_capture(path), consume_packets=True)
    return time.process_time() - started, report


def _facts(shape: str, n: int, report: dict[str, Any]) -> None:
    """What the shape's construction says its report must hold."""
    flows = report["flows"]
    if shape == "one_packet_flows":
        assert len(flows) == n
        assert {f["packets"] for f in flows} == {1}
        return
    [flow] = flows
    assert flow["packets"] == n
    if shape == "identical_segments":
        assert flow["bytes"]["client_to_server"] == MSS
        assert flow["retransmissions"] == n - 1
    elif shape == "retransmissions":
        data = (n - 3) - (n - 3) // 65  # every 65th packet after the handshake is an ACK
        assert flow["bytes"]["client_to_server"] == 64 * MSS
        assert flow["retransmissions"] == data - 64
    elif shape == "sack_every_ack":
        assert flow["retransmissions"] == 0
        # every segment timed by the SACK block that reports it, 50 µs later
        assert flow["rtt_ms"] == {"min": 0.05, "median": 0.05, "p95": 0.05}
    elif shape == "acks_of_nothing":
        assert flow["bytes"] == {"client_to_server": 0, "server_to_client": 0}
        assert flow["retransmissions"] == 0


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_adversarial_capture_same_report_and_linear_time(shape: str, tmp_path: Path) -> None:
    small = tmp_path / "small.pcap"
    large = tmp_path / "large.pcap"
    small.write_bytes(SHAPES[shape](SMALL))
    large.write_bytes(SHAPES[shape](GROWTH * SMALL))
    _analyse(small)  # warm-up: kernels loaded, memory pools grown
    small_s = min(_analyse(small)[0] for _ in range(3))
    (first_s, first), (second_s, second) = _analyse(large), _analyse(large)
    assert first == second
    _facts(shape, GROWTH * SMALL, first)
    ratio = min(first_s, second_s) / small_s
    assert ratio < RATIO_BOUND, f"{GROWTH}x the packets took {ratio:.1f}x as long"
