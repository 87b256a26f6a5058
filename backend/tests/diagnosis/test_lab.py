"""The diagnosis on the seed lab captures (../shared/captures/lab): every capture leads with the
factor its manifest expects, and each rule fires where its situation is, with the numbers that
prove it, and stays silent where it is not."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import cache

import pytest

from tcplens.capture import read_capture
from tcplens.diagnosis.engine import Diagnosis, diagnose
from tcplens.diagnosis.finding import Finding
from tcplens.tcp.analyze import analyze_tcp
from tests.capture.shared_captures import LAB, require

MANIFEST = json.loads((LAB / "manifest.json").read_text()) if LAB.is_dir() else {}


@cache
def diagnosed(name: str) -> Diagnosis:
    require(LAB)
    capture = read_capture(LAB / f"{name}.pcap")
    return diagnose(capture, analyze_tcp(capture.packets))


def finding(name: str, code: str) -> Finding | None:
    return next((f for f in diagnosed(name).findings if f.code == code), None)


@pytest.mark.parametrize("name", sorted(MANIFEST) or ["lab captures absent"])
def test_first_finding_is_the_expected_factor(name: str) -> None:
    require(LAB)
    findings = diagnosed(name).findings
    assert findings, f"{name}: no finding"
    assert findings[0].factor == MANIFEST[name]["expected_primary_factor"], [
        (f.code, f.severity, f.time_lost_s) for f in findings
    ]
    assert findings[0].severity in ("high", "info")


def test_receiver_window_names_the_window_rtt_and_cap() -> None:
    f = finding("rcvbuf_locked_download", "receiver-window-limited")
    assert f is not None and f.severity == "high" and f.flows == (1,)
    assert "advertised window never exceeded 41 KB" in f.summary
    assert "31 ms round trip" in f.summary
    assert "caps the transfer at 11 Mbit/s" in f.summary
    # one flow: the capture does not show the path's capacity, so no rate is assumed
    assert "The capture does not show the path's capacity" in f.summary
    assert "37 KB for 10 Mbit/s, 372 KB for 100 Mbit/s, 3.6 MB for 1.0 Gbit/s" in f.summary
    assert "SO_RCVBUF" in f.fix and "372 KB for 100 Mbit/s" in f.fix
    assert "needed_window_bytes" not in f.evidence.extra
    assert f.evidence.extra["advertised_window_bytes"] == 41992
    assert 5.0 < (f.time_lost_s or 0) < 6.3
    assert finding("bottleneck_download", "receiver-window-limited") is None
    assert finding("sndbuf_small_upload", "receiver-window-limited") is None


def test_receiver_window_of_a_tiny_listening_buffer() -> None:
    f = finding("rwnd_small_upload", "receiver-window-limited")
    assert f is not None
    assert "never exceeded 1.4 KB" in f.summary and "61 ms round trip" in f.summary
    assert "caps the transfer at 191 kbit/s" in f.summary


def test_receiving_application_shrinking_its_window() -> None:
    f = finding("zero_window_slow_reader", "receiver-app-slow")
    assert f is not None and f.severity == "high"
    assert "of a receive window of up to 8.5 KB it let its window shrink to 1.4 KB" in f.summary
    assert "the window alone would have allowed 2.3 Mbit/s" in f.summary
    assert "read faster" in f.fix
    assert finding("rcvbuf_locked_download", "receiver-app-slow") is None
    assert finding("bottleneck_download", "receiver-app-slow") is None


def test_sender_buffer_plateau_below_the_window() -> None:
    f = finding("sndbuf_small_upload", "sender-buffer-limited")
    assert f is not None and f.severity == "high"
    assert "80 ms round trip" in f.summary and "nothing was lost" in f.summary
    assert "SO_SNDBUF" in f.fix
    for other in ("stop_and_wait_app", "bottleneck_download", "rcvbuf_locked_download"):
        assert finding(other, "sender-buffer-limited") is None, other


def test_stop_and_wait_counts_the_turns() -> None:
    f = finding("stop_and_wait_app", "stop-and-wait")
    assert f is not None and f.severity == "high"
    assert "31 pauses of 26 ms" in f.summary
    assert "application answered (32 answers of 4 bytes): a stop-and-wait exchange" in f.summary
    assert "Pipeline" in f.fix
    assert finding("nagle_delack", "stop-and-wait") is None
    assert finding("bottleneck_download", "stop-and-wait") is None


def test_nagle_stalls_are_counted_and_timed() -> None:
    f = finding("nagle_delack", "nagle-delayed-ack")
    assert f is not None and f.severity == "high"
    assert f.summary.startswith("24 times, 10.77.0.1:56846 sent a small segment (54 bytes")
    assert "delayed that ACK by 42 ms" in f.summary and "round trip of 11 ms" in f.summary
    assert "TCP_NODELAY" in f.fix
    assert f.evidence.frames[:2] == (10, 12)  # first stall: header frame 10, body frame 12
    # A slow reader's window updates also release small segments late: not Nagle.
    assert finding("zero_window_slow_reader", "nagle-delayed-ack") is None


def test_packet_loss_counts_resent_segments() -> None:
    f = finding("lossy_download", "packet-loss")
    assert f is not None and f.severity == "high"
    assert "retransmitted 67 of 3521 data segments (2%)" in f.summary
    assert "between the capture point and 10.77.0.1:49628" in f.summary
    # A drop-tail queue overflowing a few times is not a loss problem.
    assert finding("bottleneck_download", "packet-loss") is None


def test_bandwidth_says_the_path_was_the_limit() -> None:
    f = finding("bottleneck_download", "bandwidth-limited")
    assert f is not None and f.severity == "info"
    assert "the path itself was the limit" in f.summary
    # the lab's bottleneck is 15 Mbit/s (manifest): the rate it measured is within 10 % of it
    sent = re.search(r"sent at ([\d.]+) Mbit/s", f.summary)
    assert sent is not None and abs(float(sent.group(1)) - 15) <= 1.5
    assert "round trip grew from 31 ms to 63 ms" in f.summary
    assert finding("rcvbuf_locked_download", "bandwidth-limited") is None


def test_no_connection_reuse_sums_handshakes_and_slow_starts() -> None:
    f = finding("no_reuse_uploads", "no-connection-reuse")
    assert f is not None and f.severity == "high"
    assert f.flows == tuple(range(1, 9))
    assert f.summary.startswith("8 connections from 10.77.0.1 to 10.77.0.2:80")
    assert "121 ms handshake" in f.summary or "120 ms handshake" in f.summary
    assert "keep-alive" in f.fix
    # its slow starts are counted there, not again on their own
    assert finding("no_reuse_uploads", "slow-start-bound") is None
    assert diagnosed("no_reuse_uploads").flows[3].limiting_factor == "connection_setup"
    assert finding("nagle_delack", "no-connection-reuse") is None


def test_dns_delay_calls_out_the_reverse_lookup() -> None:
    f = finding("dns_delay_upload", "dns-delay")
    assert f is not None and f.severity == "high" and f.flows == (1,)
    assert "10.77.0.1 waited 3.0 s for DNS" in f.summary
    assert "reverse (PTR) lookup of the IP literal 10.77.0.2 took 1.5 s" in f.summary
    assert "NXDOMAIN" in f.summary
    assert f.evidence.frames == (1, 2, 3, 4, 5)
    assert finding("no_reuse_uploads", "dns-delay") is None


def test_slow_start_bound_on_a_short_upload() -> None:
    f = finding("dns_delay_upload", "slow-start-bound")
    assert f is not None and f.severity in ("low", "info")
    assert f.summary.startswith("Flow 1 moved 100 KB and spent")
    assert "round trips of 21 ms" in f.summary
    # A long transfer that reached the path's limit is not "too short".
    assert finding("bottleneck_download", "slow-start-bound") is None


def test_round_trip_bound_only_when_nothing_worse() -> None:
    f = finding("bottleneck_download", "round-trip-bound")
    assert f is not None and f.severity == "info"
    assert finding("rcvbuf_locked_download", "round-trip-bound") is None


def test_flow_verdicts_name_the_factor_with_the_most_time() -> None:
    for name in ("rcvbuf_locked_download", "lossy_download", "zero_window_slow_reader"):
        verdict = diagnosed(name).flows[1]
        assert verdict.limiting_factor == MANIFEST[name]["expected_primary_factor"]
        shares = verdict.factor_shares
        assert max(shares, key=lambda k: shares[k]) == verdict.limiting_factor
        assert 0.5 < sum(shares.values()) <= 1.0


def test_analyze_json_carries_the_findings() -> None:
    require(LAB)
    out = subprocess.run(
        [sys.executable, "-m", "tcplens.cli", "analyze", str(LAB / "rwnd_small_upload.pcap"),
         "--json"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    report = json.loads(out.stdout)
    first = report["findings"][0]
    assert first["code"] == "receiver-window-limited"
    assert first["factor"] == "receiver_window"
    assert set(first) >= {"severity", "title", "summary", "fix", "time_lost_s", "flows"}
    assert first["evidence"]["time_ranges_s"] and first["evidence"]["frames"]
    assert report["flows"][0]["limiting_factor"] == "receiver_window"
    assert report["flows"][0]["factor_shares"]["receiver_window"] > 0.9


PRACTICAL = LAB.parent / "corpus" / "practical-packet-analysis"


def test_a_window_that_never_reopens_is_the_receiving_application() -> None:
    require(PRACTICAL)
    capture = read_capture(PRACTICAL / "tcp_zerowindowdead.pcapng")
    d = diagnose(capture, analyze_tcp(capture.packets))
    f = d.findings[0]
    assert f.code == "receiver-app-slow" and f.severity == "high"
    assert f.title == "Receiving application stopped reading: its window stayed zero"
    assert "172.31.136.85:38760" in f.summary and "advertised a zero window 4 times" in f.summary
    assert "still zero when the capture ended, 24 s after it closed" in f.summary
    assert d.flows[1].limiting_factor == "receiver_app"
    # Recovered after 10 ms: said, but not a problem.
    capture = read_capture(PRACTICAL / "tcp_zerowindowrecovery.pcapng")
    (f,) = [x for x in diagnose(capture, analyze_tcp(capture.packets)).findings
            if x.code == "receiver-app-slow"]  # fmt: skip
    assert f.severity == "low" and "zero window once" in f.summary


def _practical(name: str) -> Diagnosis:
    require(PRACTICAL)
    capture = read_capture(PRACTICAL / f"{name}.pcapng")
    return diagnose(capture, analyze_tcp(capture.packets))


def test_application_delay_names_who_was_slow() -> None:
    # The three latency captures of Practical Packet Analysis: wire, client-side, server-side.
    server = _practical("latency4").findings[0]
    assert server.code == "application-delay" and server.severity == "high"
    assert server.summary.startswith(
        "In flow 1, 172.16.16.128:1606 waited 1.0 s for 74.125.95.104:80 to send although a "
        "round trip takes 35 ms"
    )
    client = _practical("latency3").findings[0]
    assert client.code == "application-delay"
    assert "74.125.95.104:80 waited 1.3 s for 172.16.16.128:1606 to send" in client.summary
    wire = _practical("latency1").findings
    assert [f.code for f in wire] == ["round-trip-bound"]
    # Two slow answers on one connection: both counted.
    post = _practical("http_post").findings[0]
    assert post.code == "application-delay" and "(twice) add up to 2.4 s" in post.summary
    # Waits that stop-and-wait already explains are not said twice.
    assert finding("stop_and_wait_app", "application-delay") is None
