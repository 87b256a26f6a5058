"""The catalogue covers DESIGN.md's table over a parameter grid, and TCP_INFO is parsed at the
kernel's offsets (no root needed)."""

from __future__ import annotations

import socket
import threading
from collections import defaultdict
from pathlib import Path

from lab import manifest, tcp_info
from lab.catalogue import catalogue
from lab.ground_truth import CHECKS
from lab.scenario import Scenario

from tcplens.diagnosis.factors import FACTORS as REGISTRY_FACTORS

# DESIGN.md's FACTOR names: the diagnosis's registry.
FACTORS = set(REGISTRY_FACTORS)


def by_factor() -> dict[str, list[Scenario]]:
    grid = defaultdict(list)
    for sc in catalogue():
        grid[sc.expected_primary_factor].append(sc)
    return grid


def test_every_factor_over_at_least_four_parameter_sets_in_both_parts() -> None:
    grid = by_factor()
    assert set(grid) == FACTORS
    for factor, scenarios in grid.items():
        assert len({(s.rtt_ms, s.bottleneck_mbps, s.app["size"]) for s in scenarios}) >= 4, factor
        parts = {s.heldout for s in scenarios}
        assert parts == {False, True}, f"{factor}: in the tuning and the held-out part"
        assert {s.family for s in scenarios} == {4, 6}, factor
        assert {s.capture_at for s in scenarios} == {"client", "server"}, factor


def test_the_grid_spans_rtt_rate_handshake_congestion_control_and_flows() -> None:
    scenarios = catalogue()
    assert min(s.rtt_ms for s in scenarios) <= 3
    assert max(s.rtt_ms for s in scenarios) >= 250
    assert min(s.bottleneck_mbps for s in scenarios) <= 5
    assert max(s.bottleneck_mbps for s in scenarios) >= 200
    assert {s.cc for s in scenarios} == {"cubic", "bbr"}
    midway = {s.expected_primary_factor for s in scenarios if s.capture_delay_s > 0}
    # a capture without the handshake for every factor whose connection outlives tcpdump's start
    assert {"receiver_window", "receiver_app", "sender_buffer", "loss", "bandwidth"} <= midway
    assert {"application", "latency"} <= midway
    both = {s.expected_primary_factor for s in scenarios if s.both_ends}
    assert both == FACTORS - {"dns"}  # (the DNS server sits at the server: see dns())
    several = [s for s in scenarios if s.app.get("parallel")]
    assert {s.heldout for s in several} == {False, True}
    for s in several:
        assert 0 <= s.extra["held_flow"] < len(s.app["parallel"])


def test_expected_factors_are_design_factors_with_ground_truth_checks() -> None:
    for sc in catalogue():
        assert sc.expected_primary_factor in FACTORS
        assert sc.expected_primary_factor in CHECKS
        assert sc.cc in ("cubic", "bbr")
    # the CI subset: one per situation (bandwidth: the bottleneck and the healthy bulk control)
    ci = [s.expected_primary_factor for s in catalogue() if s.ci]
    assert set(ci) == FACTORS and len(ci) == len(FACTORS) + 1


def test_tcp_info_reports_what_a_loopback_connection_did() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    payload = b"x" * 100_000
    received = bytearray()

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            while len(received) < len(payload):
                received.extend(conn.recv(65536))
            conn.sendall(b"ok")
            conn.recv(1)  # stay open until the client has read its TCP_INFO and closed

    thread = threading.Thread(target=serve)
    thread.start()
    with socket.create_connection(listener.getsockname()) as sock:
        sock.sendall(payload)
        assert sock.recv(2) == b"ok"
        info = tcp_info.read(sock)
    thread.join()
    listener.close()
    assert info["state"] == 1  # TCP_ESTABLISHED
    assert info["bytes_acked"] == len(payload) + 1  # the SYN counts one
    assert info["bytes_received"] == 2
    assert info["snd_mss"] > 0
    assert info["busy_time_us"] is not None
    assert 0 < info["min_rtt_us"] <= info["rtt_us"]


def test_a_lab_run_is_read_back_from_its_manifest(tmp_path: Path) -> None:
    for name in ("stop_and_wait_16k_25ms.pcap", "x.pcap"):
        (tmp_path / name).write_bytes(b"")
    manifest.write(
        tmp_path,
        {
            "stop_and_wait_16k_25ms": {
                "file": "stop_and_wait_16k_25ms.pcap",
                "expected_primary_factor": "application",
            },
            "no_longer_in_the_catalogue": {"file": "x.pcap", "expected_primary_factor": "dns"},
            "nagle_delack_25_posts_10ms": {"file": None, "error": "LabError: client failed"},
        },
    )
    [capture] = manifest.load_captures(tmp_path)
    assert capture.scenario.name == "stop_and_wait_16k_25ms"
    assert capture.path == tmp_path / "stop_and_wait_16k_25ms.pcap"
    assert capture.expected_primary_factor == "application"
