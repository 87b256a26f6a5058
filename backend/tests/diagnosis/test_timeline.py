"""The period labelling on transfers built to show one situation each."""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis.finding import FACTOR_INDEX, Factor
from tcplens.diagnosis.timeline import nagle_stalls, transfer_intervals
from tests.diagnosis.synthetic import SEG, slow_start, transfer, window_rounds


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
