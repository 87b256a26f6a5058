"""RTT samples: Karn's rule, SACK samples, timestamps, handshake halves."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import (
    RTT_DATA_ACK,
    RTT_HANDSHAKE_SYN,
    RTT_HANDSHAKE_SYNACK,
    RTT_TIMESTAMP,
    VANTAGE_NAMES,
)
from tcplens.tcp.path_rtt import select
from tests.capture.shared_captures import LAB, SHARED_CAPTURES, require
from tests.tcp.synthetic import Seg, handshake, table

MSS = 1000


def samples(segs: list[Seg], kind: int) -> list[tuple[int, float]]:
    """(acking frame, RTT ms) of one kind; for data → ACK, past the handshake (the SYN and
    SYN/ACK occupy sequence space, so their ACKs are data → ACK samples too, as in Wireshark)."""
    r = analyze_tcp(table(segs)).rtt
    sel = (r.kind == kind) & ((kind != RTT_DATA_ACK) | (r.frame > 3))
    return [(int(f), round(x / 1e6, 3)) for f, x in zip(r.frame[sel], r.rtt_ns[sel], strict=True)]


def test_handshake_is_split_in_two_halves_and_gives_the_vantage() -> None:
    segs = handshake(rtt_ms=30)  # SYN at 0, SYN/ACK at 30, ACK at 30.1: captured at the client
    r = analyze_tcp(table(segs)).rtt
    assert r.frame[r.kind == RTT_DATA_ACK].tolist() == [2, 3]
    assert samples(segs, RTT_HANDSHAKE_SYN) == [(2, 30.0)]
    assert samples(segs, RTT_HANDSHAKE_SYNACK) == [(3, 0.1)]
    a = analyze_tcp(table(segs))
    assert a.flows.handshake_rtt_ns.tolist() == [30_100_000]
    assert VANTAGE_NAMES[int(a.flows.vantage[0])] == "near_client"


def test_karn_no_sample_from_a_retransmitted_range() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=MSS), Seg(20.1, True, 1 + MSS, ack=1, length=MSS)]
    segs += [Seg(30.1, False, 1, ack=MSS + 1)]  # frame 6: 10.1 ms sample for frame 4
    segs += [Seg(250, True, 1 + MSS, ack=1, length=MSS)]  # frame 7: RTO retransmission
    segs += [Seg(260, False, 1, ack=2 * MSS + 1)]  # frame 8: ambiguous, no sample
    segs += [Seg(261, True, 1 + 2 * MSS, ack=1, length=MSS)]  # frame 9: new data
    segs += [Seg(271, False, 1, ack=3 * MSS + 1)]  # frame 10: 10 ms sample again
    assert samples(segs, RTT_DATA_ACK) == [(6, 10.1), (10, 10.0)]


def test_delayed_ack_times_the_newest_segment_it_covers() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=MSS), Seg(21, True, 1 + MSS, ack=1, length=MSS)]
    segs += [Seg(31, False, 1, ack=2 * MSS + 1)]  # frame 6 covers frames 4 and 5
    assert samples(segs, RTT_DATA_ACK) == [(6, 10.0)]


def test_sack_block_times_the_segment_it_newly_covers() -> None:
    segs = handshake()
    segs += [Seg(20 + i, True, 1 + i * MSS, ack=1, length=MSS) for i in range(3)]  # frames 4-6
    segs += [Seg(31, False, 1, ack=1, sacks=[(MSS + 1, 2 * MSS + 1)])]  # frame 7 SACKs frame 5
    segs += [Seg(32, False, 1, ack=1, sacks=[(MSS + 1, 3 * MSS + 1)])]  # frame 8 SACKs frame 6
    assert samples(segs, RTT_DATA_ACK) == [(7, 10.0), (8, 10.0)]


def test_timestamp_echo_gives_a_sample() -> None:
    segs = handshake()
    segs += [Seg(20, True, 1, ack=1, length=MSS, ts=(500, 90))]  # frame 4 carries TSval 500
    segs += [Seg(20.5, True, 1 + MSS, ack=1, length=MSS, ts=(500, 90))]
    segs += [Seg(32, False, 1, ack=2 * MSS + 1, ts=(91, 500))]  # frame 6 echoes 500
    assert samples(segs, RTT_TIMESTAMP) == [(6, 12.0)]


def test_flow_rtt_is_the_path_round_trip_on_every_lab_capture() -> None:
    """Whatever the capture point, the flow's RTT is the path's (manifest), never a local ACK's
    turnaround: rwnd_small_upload (near the client) and lossy_download (near the server) used to
    give 0.046 ms and 0.028 ms minima from data the near end acknowledged."""
    require(LAB)
    manifest = json.loads((LAB / "manifest.json").read_text())
    assert len(manifest) == 10
    for entry in manifest.values():
        flows = analyze_tcp(read_capture(str(SHARED_CAPTURES / entry["file"])).packets).flows
        rtt_ms = entry["rtt_ms"]
        has = flows.rtt_min_ns >= 0
        assert has.any(), entry["file"]
        assert (flows.rtt_min_ns[has] / 1e6 >= 0.9 * rtt_ms).all(), (
            entry["file"],
            flows.rtt_min_ns,
        )
        # The median stays within a few round trips of the path (queueing, delayed ACKs).
        assert (flows.rtt_median_ns[has] / 1e6 <= 3 * rtt_ms).all(), entry["file"]


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(1).integers(0, 1 << 40, 1000),
        np.random.default_rng(2).integers(0, 4, 1000),  # RTT samples repeat
        np.arange(1000),
        np.arange(1000)[::-1],
        np.r_[np.arange(500), np.arange(500)[::-1]],  # organ pipe (median-of-3 killer shape)
        np.full(100, 7),
        np.array([5]),
        np.array([3, 1]),
    ],
    ids=["random", "repeats", "ascending", "descending", "organ-pipe", "equal", "one", "two"],
)
def test_select_puts_the_rank_k_value_in_place_like_a_sort(values) -> None:  # type: ignore[no-untyped-def]
    """The path RTT's median and p95 come from two selections, not a sort (O(n))."""
    v = values.astype(np.int64)
    expected = np.sort(v)
    n = v.shape[0]
    for k in sorted({0, (n - 1) // 2, int(np.ceil(0.95 * n)) - 1, n - 1}):
        w = v.copy()
        select(w, 0, n, k)
        assert w[k] == expected[k]
        assert np.all(w[:k] <= w[k]) and np.all(w[k + 1 :] >= w[k])
        assert np.array_equal(np.sort(w), expected)  # a permutation of the input


def test_select_works_inside_a_range_and_leaves_the_rest_alone() -> None:
    """path_rtt selects within one direction's part of a flow's values (and the p95 after the
    median, from mid + 1): only v[lo:hi] may move."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        n = int(rng.integers(1, 300))
        v = rng.integers(0, int(rng.choice([3, 50, 10**6])), n).astype(np.int64)
        lo = int(rng.integers(0, n))
        hi = int(rng.integers(lo + 1, n + 1))
        k = int(rng.integers(lo, hi))
        w = v.copy()
        select(w, lo, hi, k)
        assert w[k] == np.sort(v[lo:hi])[k - lo]
        assert np.all(w[lo:k] <= w[k]) and np.all(w[k + 1 : hi] >= w[k])
        assert np.array_equal(w[:lo], v[:lo]) and np.array_equal(w[hi:], v[hi:])
        assert np.array_equal(np.sort(w[lo:hi]), np.sort(v[lo:hi]))
