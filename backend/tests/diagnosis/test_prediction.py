"""if_fixed: the slow-start model on numbers worked by hand, and the predictions on real
captures (the lab's before/after pairs and the shared lab captures)."""

from __future__ import annotations

import numpy as np
import pytest

from tcplens.diagnosis.prediction import PathModel, exchange_time, window_after
from tests.capture.shared_captures import LAB, require
from tests.diagnosis.pairs import NO_REUSE, RWND, report

MSS = 1448
IW = 10 * MSS  # 14480 bytes


def path(rtt_s: float = 0.04, mbit: float = 100.0, loss: float = 0.0) -> PathModel:
    return PathModel(rtt_s, mbit * 1e6 / 8, False, loss, MSS, IW, False)


def test_a_response_within_slow_start_costs_its_rounds_and_its_last_flight() -> None:
    # 100 KB from a 10-segment window: 14480 + 28960 + 57920 = 101360 bytes in 3 rounds, so the
    # 4th round carries the last 1040 bytes; the BDP (500 KB at 40 ms, 100 Mbit/s) is never hit.
    time, rounds = exchange_time(np.array([102400.0]), np.array([float(IW)]), path())
    assert rounds[0] == 4
    assert time[0] == pytest.approx(4 * 0.04 + 1040 / 12.5e6)


def test_a_long_transfer_streams_at_the_path_rate_once_the_window_holds_the_bdp() -> None:
    # BDP at 30 ms and 100 Mbit/s = 375000 bytes: 14480 * 2^5 = 463360 >= BDP after 5 rounds
    # that send 14480 * 31 = 448880 bytes; the remaining 1648272 bytes of 2 MB go at 12.5 MB/s.
    p = path(0.03)
    time, rounds = exchange_time(np.array([2097152.0]), np.array([float(IW)]), p)
    assert rounds[0] == 5
    assert time[0] == pytest.approx(6 * 0.03 + (2097152 - 448880) / 12.5e6)


def test_loss_bounds_the_rate_as_mathis_says() -> None:
    lossy = path(0.03, loss=0.01)
    assert lossy.usable_Bps == pytest.approx(MSS / 0.03 * np.sqrt(1.5) / 0.1)
    assert "1% loss" in lossy.words()
    assert "assumed" in lossy.words()


def test_a_warm_connection_starts_with_the_window_it_grew_capped_at_the_bdp() -> None:
    grown = window_after(np.array([0.0, 102400.0, 10 * 102400.0]), path())
    assert grown.tolist() == [IW, IW + 102400, 500000.0]


def test_receiver_window_prediction_is_within_a_factor_two_of_the_fixed_capture() -> None:
    before = report(RWND, "before")
    [finding] = [f for f in before["findings"] if f["code"] == "receiver-window-limited"]
    fixed = finding["if_fixed"]
    after = report(RWND, "after")["flows"][0]["timeline"]
    measured_after = after["last_data_s"] - after["syn_s"]
    assert 0.5 < fixed["duration_s"] / measured_after < 2.0
    assert fixed["rate_bps"] == pytest.approx(2097152 * 8 / fixed["duration_s"], rel=0.01)
    assert "at a 30 ms RTT and ~100 Mbit/s (assumed" in fixed["basis"]
    assert "2.0 MB" in fixed["basis"] and "instead of 1.6 s" in fixed["basis"]


def test_no_reuse_prediction_counts_one_handshake_and_a_request_round_trip_each() -> None:
    [finding] = [
        f for f in report(NO_REUSE, "before")["findings"] if f["code"] == "no-connection-reuse"
    ]
    fixed = finding["if_fixed"]
    assert "the 10 requests" in fixed["basis"] and "one warm connection" in fixed["basis"]
    # at least a handshake and ten request round trips of 40 ms
    assert 0.44 < fixed["duration_s"] < 1.0


def test_findings_without_a_concrete_fix_predict_nothing() -> None:
    after = report(RWND, "after")
    assert all(
        f["if_fixed"] is None
        for f in after["findings"]
        if f["code"] in ("slow-start-bound", "round-trip-bound")
    )


def test_dns_prediction_is_the_transfer_without_its_dns_wait() -> None:
    require(LAB)
    from tcplens.capture import read_capture
    from tcplens.report import analyse_capture

    r = analyse_capture(read_capture(LAB / "dns_delay_upload.pcap"))[1]
    [finding] = [f for f in r["findings"] if f["code"] == "dns-delay"]
    timeline = r["flows"][0]["timeline"]
    first_query = min(a for a, _ in finding["evidence"]["time_ranges_s"])
    span = timeline["last_data_s"] - first_query
    assert finding["if_fixed"]["duration_s"] == pytest.approx(
        span - finding["time_lost_s"], abs=1e-5
    )
    assert finding["if_fixed"]["basis"].startswith("without the 3.0 s of DNS wait")
