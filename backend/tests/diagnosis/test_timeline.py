"""The period labelling on transfers built to show one situation each."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tcplens.diagnosis.finding import FACTOR_INDEX, Factor
from tcplens.diagnosis.rules import stop_and_wait
from tcplens.diagnosis.timeline import nagle_stalls, transfer_intervals
from tcplens.diagnosis.transfer import Transfer
from tests.diagnosis.synthetic import (
    SEG,
    connection,
    context,
    slow_start,
    transfer,
    window_rounds,
)


def share(spans, factor: Factor) -> float:  # type: ignore[no-untyped-def]
    return float(spans.duration[spans.factor == FACTOR_INDEX[factor]].sum() / spans.duration.sum())


def test_window_full_every_round_is_receiver_window() -> None:
    tr = window_rounds(rounds=20, per_round=8, rtt=0.05)
    spans = transfer_intervals(tr, base_rtt=0.05)
    assert share(spans, "receiver_window") > 0.95


def test_window_shrinking_below_half_is_the_receiving_application() -> None:
    # The receiver first offers 8 segments, then only 2: its buffer holds data its application
    # has not read. The sender fills exactly the advertised window every round trip.
    rtt = 0.05
    windows = np.array([8] * 4 + [2] * 16)  # segments, as advertised before round r
    t = np.concatenate([r * rtt + np.arange(n) * 1e-4 for r, n in enumerate(windows)])
    seq = 1 + np.arange(t.size) * SEG
    ack_t = np.concatenate(([-rtt / 2], (np.arange(windows.size) + 1) * rtt - 5e-5))
    ack = np.concatenate(([1], 1 + np.cumsum(windows) * SEG))
    win = np.concatenate((windows, [2])) * SEG
    tr = transfer(t, seq, np.full(t.size, SEG), ack_t, ack, win)
    spans = transfer_intervals(tr, base_rtt=rtt)
    assert share(spans, "receiver_app") > 0.6
    assert share(spans, "receiver_window") < 0.3


def test_growing_flight_with_a_big_window_is_slow_start() -> None:
    tr = slow_start(segments=120, rtt=0.05)
    spans = transfer_intervals(tr, base_rtt=0.05)
    assert share(spans, "receiver_window") == 0.0
    assert share(spans, "slow_start") > 0.95


def test_same_flight_every_round_long_after_the_ack_is_the_application() -> None:
    # 8 segments per round trip although the window would take far more, all acknowledged
    # half a round trip before the next 8 leave: the sender's application had nothing more.
    tr = window_rounds(rounds=10, per_round=8, rtt=0.05, windows=[10**7] * 10, ack_lead=0.025)
    spans = transfer_intervals(tr, base_rtt=0.05)
    # (the pause before the last round cannot show whether the window would have grown)
    assert share(spans, "application") > 0.8


def test_same_flight_every_round_right_on_the_ack_is_the_sender_buffer() -> None:
    # The same, but each round leaves the moment the ACK frees the sender's buffer.
    tr = window_rounds(rounds=10, per_round=8, rtt=0.05, windows=[10**7] * 10)
    spans = transfer_intervals(tr, base_rtt=0.05)
    assert share(spans, "sender_buffer") > 0.8


def test_retransmission_starts_a_loss_period() -> None:
    tr = slow_start(segments=120, rtt=0.05)
    seq = tr.seq.copy()
    seq[60] = seq[40]  # segment 60 re-sends segment 40's data
    tr2 = transfer(tr.t, seq, tr.seq_end - tr.seq, tr.ack_t, tr.ack, tr.window)
    spans = transfer_intervals(tr2, base_rtt=0.05)
    loss = spans.factor == FACTOR_INDEX["loss"]
    assert spans.frame1[loss].min() == tr2.frame[60]  # the interval that ended in it
    # and the congestion-window time after it, as nothing else (queue, window) held the sender
    assert (spans.factor[spans.t0 >= tr2.t[60]] == FACTOR_INDEX["loss"]).all()
    assert not loss[spans.t1 < tr2.t[60]].any()


def pushed_messages(after_recovery_s: float) -> Transfer:
    """A server pushing a 310-byte message every 60 s over a 300 ms round trip (a mining
    pool's jobs: ndpi_mining.pcapng's flow 4): the third is lost and re-sent 400 ms later, its
    ACK back at 120.7 s; the next message leaves ``after_recovery_s`` after that ACK."""
    rtt = 0.3
    t = [0.0, 60.0, 120.0, 120.4, 120.7 + after_recovery_s]
    seq = [1, 311, 621, 621, 931]
    ack_t = [0.3, 60.3, 120.7, t[4] + rtt]
    ack = [311, 621, 931, 1241]
    return transfer(t, seq, [310] * 5, ack_t, ack, [64_000] * 4)


def test_a_pause_after_a_finished_recovery_is_not_loss() -> None:
    # The recovery ended at 120.7 s; the sender then had nothing to send for a minute: that
    # minute is idle (as the pauses before the loss were), only the wait for the retransmission
    # is the loss's.
    tr = pushed_messages(after_recovery_s=59.3)
    spans = transfer_intervals(tr, base_rtt=0.3)
    loss = spans.factor == FACTOR_INDEX["loss"]
    assert spans.frame1[loss].tolist() == [tr.frame[3]]  # the interval ending in the re-send
    assert float(spans.duration[loss].sum()) == pytest.approx(0.4)
    after = spans.t0 == tr.t[3]
    assert spans.factor[after].tolist() == [-1]  # idle, as the other minute-long pauses


def test_a_segment_soon_after_a_recovery_is_still_loss() -> None:
    # The next message right after the recovery ended: the interval is the recovery's.
    tr = pushed_messages(after_recovery_s=0.1)
    spans = transfer_intervals(tr, base_rtt=0.3)
    assert spans.factor[spans.t0 == tr.t[3]].tolist() == [FACTOR_INDEX["loss"]]


def test_nagle_stall_is_found_and_measured() -> None:
    # 10 ms path; a 50-byte header, its ACK held 40 ms by the receiver, then the 200-byte body.
    rtt = 0.010
    t = [0.0, 0.0501, 0.2, 0.2501]
    seq = [1, 51, 251, 301]
    length = [50, 200, 50, 200]
    ack_t = [0.050, 0.0601, 0.250, 0.2601]
    ack = [51, 251, 301, 501]
    tr = transfer(t, seq, length, ack_t, ack, [65535] * 4, mss=1448)
    stall, delay = nagle_stalls(tr, base_rtt=rtt)
    assert stall.tolist() == [True, False, True]
    assert np.allclose(delay[stall], 0.040, atol=1e-6)


def test_a_window_update_is_not_a_nagle_stall() -> None:
    # Same timing, but the ACK that released the body also opened a window that was closed.
    t = [0.0, 0.0501]
    tr = transfer(t, [1, 51], [50, 200], [0.001, 0.050], [1, 51], [50, 65535], mss=1448)
    stall, _ = nagle_stalls(tr, base_rtt=0.010)
    assert not stall.any()


def window_held_behind_a_queue(rounds: int, lag: float, lag_now: float) -> Transfer:
    """A sender the receiver's 14-segment window holds, captured near the receiver: each round
    arrives back to back, the receiver acknowledges every second segment at once, and the
    sender sends two more the moment each ACK reaches it -- ``lag_now`` after the capture
    point saw it (a queue stood between the capture point and the sender), where the handshake
    measured ``lag``. Each round's first segment echoes the timestamp of the ACK that released
    it: ``lag_now`` earlier."""
    per_round, spacing = 14, 1e-4
    t: list[float] = []
    ack_t: list[float] = [-lag / 2]
    ack: list[int] = [1]
    echo_t: list[float] = []
    start = 0.0
    for r in range(rounds):
        t += [start + k * spacing for k in range(per_round)]
        for k in range(1, per_round, 2):
            ack_t.append(start + k * spacing + 5e-5)
            ack.append(1 + (r * per_round + k + 1) * SEG)
        start = ack_t[-per_round // 2] + lag_now  # released by the round's first ACK
        echo_t.append(start)
    seq = 1 + np.arange(len(t)) * SEG
    window = np.full(len(ack), per_round * SEG)
    tr = transfer(t, seq, np.full(len(t), SEG), ack_t, ack, window, lag_s=lag)
    echo = np.asarray(echo_t[:-1])
    return replace(tr, echo_t=echo, echo_s=np.full(echo.size, lag_now))


def test_window_held_sender_behind_a_queue_is_not_an_application_turn() -> None:
    # 30 ms path, 20 ms of queue: the sender waited with data queued for ACKs that reached it
    # 50 ms after the capture point saw them, not for its application (stop-and-wait).
    tr = window_held_behind_a_queue(rounds=30, lag=0.03, lag_now=0.05)
    spans = transfer_intervals(tr, base_rtt=0.03)
    assert share(spans, "application") == 0.0
    assert share(spans, "receiver_window") > 0.95
    ctx = context([connection(tr, 0.03)])
    assert stop_and_wait.detect(ctx) == []


def test_window_held_sender_without_a_queue_is_receiver_window() -> None:
    # The same transfer with the handshake's round trip all along (the control).
    tr = window_held_behind_a_queue(rounds=30, lag=0.03, lag_now=0.03)
    spans = transfer_intervals(tr, base_rtt=0.03)
    assert share(spans, "receiver_window") > 0.95
