"""The receiver's window scale inferred when the handshake was not captured (issue #26 point 1):
the smallest shift under which the sender never went beyond a right edge it knew, and only where
the sender's segments ended exactly at that edge (Wireshark's ``tcp.analysis.window_full``):
a sender its own buffer held fits under a window within x2 of its flight, which is not the
receiver's. Two lab captures started mid-connection, headers only and gzip in ``tests/data/lab``
(``e2e/lab/catalogue/generalise.py``): a 600 KB POST from a client with SO_SNDBUF=8192 on a 50 ms
path, captured at the server 0.6 s in (the sender's TCP_INFO: snd_wnd 86016 = 84 << 10, so the
receiver's shift is 10); a 3 MB GET into a client with SO_RCVBUF=32768 on a 70 ms path, captured
at the client 0.8 s in (shift 0: a 41,992-byte window)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

from tcplens.capture import read_capture
from tcplens.diagnosis.engine import Diagnosis, diagnose
from tcplens.diagnosis.flow_labels import infer_window_scale
from tcplens.tcp.analyze import analyze_tcp

RTT = 0.04
SEG = 1448
LAB = Path(__file__).resolve().parents[1] / "data" / "lab"
SNDBUF = "sndbuf8k_post_50ms_midconn"
RCVBUF = "rwnd_rcvbuf32k_get_70ms_midconn"


def rounds_of(flight: int, raw: int, rounds: int) -> tuple[np.ndarray, ...]:
    """Seen at the sender: a sender that puts ``flight`` bytes out every round trip, the last
    segment of a round cut short as Linux cuts the one that crosses the window's edge
    (tcp_mss_split_point); the receiver advertises ``raw`` (unscaled) on the ACK of each round,
    which arrives just before the next round leaves."""
    t, seq_end = [], []
    for r in range(rounds):
        ends = [*range(r * flight + SEG, (r + 1) * flight, SEG), (r + 1) * flight]
        t += [r * RTT + k * 1e-5 for k in range(len(ends))]
        seq_end += ends
    ack_t = [(r + 1) * RTT - 1e-4 for r in range(rounds)]
    ack = [(r + 1) * flight for r in range(rounds)]
    return (
        np.array(t), np.array(seq_end, np.int64), np.array(ack_t), np.array(ack, np.int64),
        np.full(rounds, raw, np.int64),
    )  # fmt: skip


def test_a_window_limited_sender_shows_the_true_shift_at_the_sender() -> None:
    # it fills the window, 1024 << 7, every round: its segments end at its edge
    t, seq_end, ack_t, ack, raw = rounds_of(1024 << 7, 1024, 20)
    assert infer_window_scale(t, seq_end, ack_t, ack, raw, 0.0005) == 7


def test_no_window_above_zero_or_no_round_trip_infers_nothing() -> None:
    t, seq_end, ack_t, ack, raw = rounds_of(1024 << 7, 1024, 5)
    assert infer_window_scale(t, seq_end, ack_t, ack, np.zeros_like(raw), 0.0005) == -1
    assert infer_window_scale(t, seq_end, ack_t, ack, raw, 0.0) == -1


def test_a_sender_its_buffer_held_gets_no_scale() -> None:
    # 8 segments (11,584 bytes) a round under a receiver offering 84 << 10 (86,016 bytes, as
    # sndbuf8k_post_50ms_midconn's): shift 8 (21,504) is the smallest that fits, a window within
    # x2 of the flight, but no segment ends at its edge: nothing is inferred
    t, seq_end, ack_t, ack, raw = rounds_of(8 * SEG, 84, 20)
    assert infer_window_scale(t, seq_end, ack_t, ack, raw, 0.0005) == -1
    # the same sender filling a window of 84 << 7 (10,752 bytes) every round shows shift 7
    t, seq_end, ack_t, ack, raw = rounds_of(84 << 7, 84, 20)
    assert infer_window_scale(t, seq_end, ack_t, ack, raw, 0.0005) == 7


@cache
def diagnosed(name: str) -> Diagnosis:
    capture = read_capture(LAB / f"{name}.pcap.gz")
    analysis = analyze_tcp(capture.packets)
    assert (analysis.flows.syn_ns < 0).all()  # the handshake is not in the capture
    return diagnose(capture, analysis)


def test_a_buffer_held_sender_mid_connection_is_not_read_as_window_limited() -> None:
    findings = diagnosed(SNDBUF).findings
    codes = [f.code for f in findings]
    assert codes[0] == "sender-buffer-limited", codes
    assert "receiver-window-limited" not in codes
    first = findings[0]
    # the smallest shift that fits (7: a 10.5 KB window over ~8 KB in flight) is not the
    # receiver's (10): the capture cannot tell the window, and the finding says so
    assert first.evidence.extra["window_scale"] == -1
    assert first.evidence.extra["window_scale_inferred"] is False
    assert first.evidence.extra["receiver_window_bytes"] == 0
    assert "none of its segments reached the edge of 192.0.2.2:8080's window" in first.summary
    assert "window scale could not be inferred" in first.summary
    assert "cannot tell its window in bytes" in first.summary
    assert not any("KB window" in f.summary or "window of" in f.summary for f in findings)


def test_a_window_held_sender_mid_connection_still_is() -> None:
    findings = diagnosed(RCVBUF).findings
    first = findings[0]
    assert first.code == "receiver-window-limited", [f.code for f in findings]
    assert first.evidence.extra["window_scale"] == 0
    assert first.evidence.extra["window_scale_inferred"] is True
    assert first.evidence.extra["advertised_window_bytes"] == 41992
    assert "advertised window never exceeded 41 KB" in first.summary
    assert "(shift 0, × 1) was inferred from the data" in first.summary
    assert "ended exactly at the right edge of the advertised window" in first.summary
