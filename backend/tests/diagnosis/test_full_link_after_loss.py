"""After a loss, the link may stay full: the period labelling asks whether the receiver kept
acknowledging at the path's own rate (its ACK pairs, ``labelling.path_rate``) before calling the
congestion window's time a loss's. Two lab captures, headers only and gzip in ``tests/data/lab``
(``e2e/lab/catalogue``): a BBR sender through a 5 Mbit/s bottleneck with a 50 ms queue on an 80 ms
path (101 segments dropped where the queue overflowed; the sender kept its rate and the round trip
near its minimum), captured at the client; and a CUBIC sender on a 100 Mbit/s, 150 ms path with 2 %
random loss (far from full), captured at the server."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from tcplens.capture import read_capture
from tcplens.diagnosis.labelling import path_rate
from tcplens.report import analyse_capture

LAB = Path(__file__).resolve().parents[1] / "data" / "lab"
BBR = "bottleneck_5mbit_get_80ms_bbr"
LOSSY = "lossy_2pct_get_150ms"


@cache
def report(name: str) -> dict[str, Any]:
    return analyse_capture(read_capture(LAB / f"{name}.pcap.gz"))[1]


def test_path_rate_is_the_spacing_of_back_to_back_acks() -> None:
    # 1000-byte segments leaving a 5 Mbit/s bottleneck back to back are acknowledged 1.6 ms
    # apart; one ACK in four follows a gap between flights (a round trip of 80 ms)
    gaps = np.tile([0.0016, 0.0016, 0.0016, 0.08], 50)
    ack_t = np.cumsum(gaps)
    ack = np.arange(1, gaps.size + 1, dtype=np.int64) * 1000
    assert round(path_rate(ack_t, ack) * 8) == 5_000_000
    # fewer than four pairs show no rate: no full-link test
    assert path_rate(ack_t[:4], ack[:4]) == np.inf


def test_bbr_at_a_full_bottleneck_leads_with_the_path_not_the_loss() -> None:
    r = report(BBR)
    first = r["findings"][0]
    assert first["code"] == "bandwidth-limited", [(f["code"], f["severity"]) for f in r["findings"]]
    assert "stayed within a quarter of its minimum of 80 ms" in first["summary"]
    assert "from the spacing of the receiver's ACKs" in first["summary"]
    assert "101 segments it retransmitted" in first["summary"]
    assert "did not slow it down" in first["summary"]
    # the packet pairs show the 5 Mbit/s link (the flow averaged 4.7)
    assert 4.5e6 <= first["evidence"]["path_rate_bps"] <= 5.0e6
    assert "packet-loss" not in [f["code"] for f in r["findings"]]
    flow = r["flows"][0]
    assert flow["limiting_factor"] == "bandwidth"
    assert flow["factor_shares"].get("loss", 0.0) < 0.1


def test_random_loss_far_from_a_full_path_stays_loss() -> None:
    r = report(LOSSY)
    first = r["findings"][0]
    assert first["code"] == "packet-loss", [(f["code"], f["severity"]) for f in r["findings"]]
    flow = r["flows"][0]
    assert flow["limiting_factor"] == "loss"
    # the window the losses cut delivered a fraction of the 100 Mbit/s path: none of its time
    # is the path's
    assert flow["factor_shares"].get("bandwidth", 0.0) == 0.0
