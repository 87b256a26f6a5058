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

# DESIGN.md's FACTOR names.
FACTORS = {
    "receiver_window",
    "receiver_app",
    "sender_buffer",
    "application",
    "connection_setup",
    "slow_start",
    "dns",
    "loss",
    "bandwidth",
    "nagle_delayed_ack",
    "latency",
}
SITUATIONS = {
    "receiver window too small",
    "receiving application too slow",
    "sender buffer too small",
    "application stop-and-wait",
    "no connection reuse",
    "DNS delay before connecting",
    "loss / congestion",
    "path bandwidth reached",
    "Nagle + delayed ACK",
    "healthy control: autotuned bulk transfer",
    "healthy control: pooled connection",
}


def test_every_situation_and_control_over_at_least_three_parameter_sets() -> None:
    by_situation = defaultdict(list)
    for sc in catalogue():
        by_situation[sc.situation].append(sc)
    assert set(by_situation) == SITUATIONS
    assert all(len(grid) >= 3 for grid in by_situation.values())
    assert len(catalogue()) >= 30


def test_the_grid_spans_rtt_capture_point_and_ip_version() -> None:
    scenarios = catalogue()
    assert min(s.rtt_ms for s in scenarios) <= 5
    assert max(s.rtt_ms for s in scenarios) >= 200
    for situation in {s.situation for s in scenarios}:
        grid = [s for s in scenarios if s.situation == situation]
        assert {s.family for s in grid} == {4, 6}, situation
        assert {s.capture_at for s in grid} == {"client", "server"}, situation
        assert len({s.rtt_ms for s in grid}) >= 3, situation


def test_expected_factors_are_design_factors_with_ground_truth_checks() -> None:
    for sc in catalogue():
        assert sc.expected_primary_factor in FACTORS
        assert sc.expected_primary_factor in CHECKS
    assert sum(s.ci for s in catalogue()) == len(SITUATIONS)


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
