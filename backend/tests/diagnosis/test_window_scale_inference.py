"""The receiver's window scale inferred when the handshake was not captured (issue #26 point 1):
the smallest shift under which the sender never went beyond a right edge it knew."""

from __future__ import annotations

import numpy as np

from tcplens.diagnosis.flow_labels import infer_window_scale

RTT = 0.04
SEG = 1448


def window_limited(shift: int, raw: int, rounds: int) -> tuple[np.ndarray, ...]:
    """Seen at the sender: a sender that fills the receiver's window (``raw << shift``) every
    round trip; the ACK of each round arrives just before the next round leaves."""
    per_round = (raw << shift) // SEG
    t, seq_end = [], []
    for r in range(rounds):
        for k in range(per_round):
            t.append(r * RTT + k * 1e-5)
            seq_end.append((r * per_round + k + 1) * SEG)
    ack_t = [(r + 1) * RTT - 1e-4 for r in range(rounds)]
    ack = [(r + 1) * per_round * SEG for r in range(rounds)]
    return (
        np.array(t), np.array(seq_end, np.int64), np.array(ack_t), np.array(ack, np.int64),
        np.full(rounds, raw, np.int64),
    )  # fmt: skip


def test_a_window_limited_sender_shows_the_true_shift_at_the_sender() -> None:
    t, seq_end, ack_t, ack, raw = window_limited(7, 1024, 20)
    assert infer_window_scale(t, seq_end, ack_t, ack, raw, 0.0005) == 7


def test_no_window_above_zero_or_no_round_trip_infers_nothing() -> None:
    t, seq_end, ack_t, ack, raw = window_limited(7, 1024, 5)
    assert infer_window_scale(t, seq_end, ack_t, ack, np.zeros_like(raw), 0.0005) == -1
    assert infer_window_scale(t, seq_end, ack_t, ack, raw, 0.0) == -1


def test_a_sender_the_window_did_not_hold_gets_a_window_above_its_flight() -> None:
    t, seq_end, ack_t, ack, raw = window_limited(7, 1024, 20)
    # the same data under a receiver offering 16 times more (raw 16384 << 7): the smallest shift
    # that fits (3) gives a window of what was in flight, a lower bound of the true one (the
    # words say "at least"), never less than the sender had out
    assert infer_window_scale(t, seq_end, ack_t, ack, raw * 16, 0.0005) == 3
