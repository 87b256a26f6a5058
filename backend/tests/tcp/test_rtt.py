"""RTT samples: Karn's rule, SACK samples, timestamps, handshake halves."""

from __future__ import annotations

import json

import numpy as np
import numpy.typing as npt
import pytest

from tcplens.capture import read_capture
from tcplens.capture.table import OPTION_SACK_BLOCKS, OPTION_TIMESTAMPS, RST
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import (
    RTT_DATA_ACK,
    RTT_HANDSHAKE_SYN,
    RTT_HANDSHAKE_SYNACK,
    RTT_TIMESTAMP,
    VANTAGE_NAMES,
)
from tcplens.tcp.path_rtt import FEW, SAMPLE, order_stats, select
from tcplens.tcp.timestamps import _any_timestamps
from tests.capture.shared_captures import LAB, SHARED_CAPTURES, require
from tests.tcp.synthetic import CLIENT, SERVER, Seg, handshake, table

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


def test_handshake_ack_after_a_reset_is_no_handshake_time() -> None:
    """zeek's modbus-and-non-modbus-p502 stream 4: SYN, SYN/ACK, the client's RST, and 16 s
    later a stray ACK with data. That ACK does not complete the handshake of the connection the
    RST ended (issue 27: a 15,708 ms flow RTT)."""
    segs = handshake(rtt_ms=0.06)[:2]
    segs += [Seg(117, True, 1, flags=RST), Seg(15_700, True, 1, ack=1, length=109)]
    a = analyze_tcp(table(segs))
    assert samples(segs, RTT_HANDSHAKE_SYNACK) == []
    assert a.flows.handshake_synack_rtt_ns.tolist() == [-1]
    assert a.flows.handshake_ack_ns.tolist() == [-1]


def test_path_rtt_half_is_the_smaller_of_handshake_and_data_samples() -> None:
    """A client that answered the SYN/ACK 200 ms late (suricata's dcerpc_zerologon stream 40)
    does not make every later round trip 200 ms: the capture point's round trip to the client
    is also timed by the client's ACKs of the server's data (5 ms here)."""
    segs = [*handshake(rtt_ms=0.5)[:2], Seg(200.5, True, 1, ack=1)]  # frames 1-3
    for k in range(4):  # the client's request, the server's ACK 1 ms later, its answer, ...
        t = 300 + 100 * k
        segs += [Seg(t, True, 1 + k * 100, ack=1 + k * 50, length=100)]
        segs += [Seg(t + 1, False, 1 + k * 50, ack=1 + (k + 1) * 100, length=50)]
        segs += [Seg(t + 6, True, 1 + (k + 1) * 100, ack=1 + (k + 1) * 50)]  # ACK 5 ms later
    a = analyze_tcp(table(segs))
    assert a.flows.handshake_synack_rtt_ns.tolist() == [200_000_000]  # the handshake as it was
    assert a.flows.rtt_median_ns.tolist() == [6_000_000]  # 1 ms beyond + 5 ms to the client


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


def test_timestamps_first_seen_late_in_the_capture_still_give_samples() -> None:
    """A capture without the option skips the pairing pass: one whose first timestamps come
    thousands of packets in (after other flows without them) is not taken for one."""
    plain = handshake() + [Seg(20 + i, True, 1 + i * MSS, ack=1, length=MSS) for i in range(1500)]
    later = [
        *handshake(t0=2000.0),
        Seg(2020, True, 1, ack=1, length=MSS, ts=(500, 90)),
        Seg(2032, False, 1, ack=MSS + 1, ts=(91, 500)),
    ]
    client = (CLIENT[0], CLIENT[1] + 1)  # a second connection of the same hosts
    for s in later:
        s.src, s.dst = (client, SERVER) if s.from_client else (SERVER, client)
    segs = plain + later
    r = analyze_tcp(table(segs)).rtt
    echo = len(segs)  # the last frame echoes the TSval the one before it carried
    assert [(int(f), int(s)) for f, s in zip(r.frame, r.sent_frame, strict=True) if f == echo] == [
        (echo, echo - 1),
        (echo, echo - 1),
    ]
    assert sorted(r.kind[r.frame == echo].tolist()) == [RTT_DATA_ACK, RTT_TIMESTAMP]


@pytest.mark.parametrize("at", [None, 0, 1023, 1024, 5000, 9999])
def test_any_timestamps_finds_one_row_anywhere(at: int | None) -> None:
    options = np.full(10_000, OPTION_SACK_BLOCKS, np.uint8)  # every other option bit set
    if at is not None:
        options[at] |= OPTION_TIMESTAMPS
    assert _any_timestamps(options) is (at is not None)
    assert not _any_timestamps(options[:0])


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


def _timestamp_reference(
    segs: list[Seg], *, keep_negative: bool = False
) -> list[tuple[int, int, int]]:
    """RFC 7323 samples by their definition (one flow): the first packet of each direction
    echoing a value (TSecr, not 0) that the other direction sent as a TSval, timed from the
    first packet that carried that TSval; negative ones dropped unless ``keep_negative``.
    (echo frame, sent frame, ns)."""
    t = [1_700_000_000_000_000_000 + int(s.t_ms * 1e6) for s in segs]
    out = []
    for echoer in (True, False):
        sent: dict[int, int] = {}
        echoed: dict[int, int] = {}
        for i, s in enumerate(segs):
            if s.ts is None:
                continue
            if s.from_client != echoer:
                sent.setdefault(s.ts[0], i)
            elif s.ts[1] != 0:
                echoed.setdefault(s.ts[1], i)
        out += [(e + 1, sent[v] + 1, t[e] - t[sent[v]]) for v, e in echoed.items() if v in sent]
    return sorted(x for x in out if x[2] >= 0 or keep_negative)


def _timestamp_flow(
    rng: np.random.Generator, n: int, shape: str, ascending: bool = False
) -> list[Seg]:
    """A flow of ``n`` packets after the handshake, both directions carrying timestamps that
    follow ``shape``: each side's clock ticks 0-2 per packet (dense), jumps by up to 10**6
    (sparse), or is reset once (backwards); some packets carry no option, and the capture's
    clock sometimes steps back (negative samples). Each side echoes one of the last few values
    the other sent; with ``ascending`` never one below its previous echo (a real stack's
    echoes ascend, as bulk transfers show: the kernel's one-pass rule), now and then one the
    other never sent."""
    segs = handshake()
    clock = {True: int(rng.integers(1, 2**31)), False: int(rng.integers(1, 2**31))}
    seen = {True: [0], False: [0]}  # TSvals each side sent so far (0: none)
    echoed = {True: 0, False: 0}
    t = 20.0
    for i in range(n):
        side = bool(rng.random() < 0.5)
        step = int(rng.integers(0, 3)) if shape != "sparse" else int(rng.integers(0, 10**6))
        if shape == "backwards" and i == n // 2:
            step = -int(rng.integers(1, 1000))
        clock[side] = max(1, clock[side] + step)
        seen[side].append(clock[side])
        # echo one of the last few values the other side sent (or 0: nothing to echo yet)
        ecr = seen[not side][-int(rng.integers(1, min(4, len(seen[not side])) + 1))]
        if ascending:
            ecr = max(ecr, echoed[side]) + int(ecr > 0 and rng.random() < 0.05)
            echoed[side] = ecr
        t += float(rng.exponential(1.0)) - (5.0 if rng.random() < 0.02 else 0.0)  # clock steps
        ts = None if rng.random() < 0.05 else (clock[side], ecr)
        segs.append(Seg(t, side, 1, ack=1, ts=ts))
    return segs


@pytest.mark.parametrize("ascending", [False, True])
@pytest.mark.parametrize("shape", ["dense", "sparse", "backwards"])
def test_timestamp_samples_follow_their_definition(shape: str, ascending: bool) -> None:
    rng = np.random.default_rng(["dense", "sparse", "backwards"].index(shape) + 3 * ascending)
    for n in (1, 2, 5, 40, 700):
        for _ in range(5):
            segs = _timestamp_flow(rng, n, shape, ascending)
            r = analyze_tcp(table(segs)).rtt
            sel = r.kind == RTT_TIMESTAMP
            got = list(
                zip(
                    r.frame[sel].tolist(),
                    r.sent_frame[sel].tolist(),
                    r.rtt_ns[sel].tolist(),
                    strict=True,
                )
            )
            assert got == _timestamp_reference(segs)


def test_a_flow_dropping_negative_samples_moves_the_later_flows_down() -> None:
    """Each flow's samples are written where they would start if none were dropped; after a
    flow whose capture clock stepped back (negative samples dropped), the later flows' samples
    move down to their rows: each flow's samples are the same as when it is captured alone."""
    rng = np.random.default_rng(11)
    flows = [_timestamp_flow(rng, 300, "dense") for _ in range(3)]
    for k, segs in enumerate(flows):  # three connections of the same two hosts
        client = (CLIENT[0], CLIENT[1] + k)
        for s in segs:
            s.src, s.dst = (client, SERVER) if s.from_client else (SERVER, client)
    both = analyze_tcp(table([s for segs in flows for s in segs])).rtt
    first_frame = 0
    dropped = 0
    for k, segs in enumerate(flows):
        alone = analyze_tcp(table(segs)).rtt
        rows = slice(int(both.offsets[k]), int(both.offsets[k + 1]))
        for name in ("direction", "kind", "time_ns", "rtt_ns"):
            assert np.array_equal(getattr(both, name)[rows], getattr(alone, name)), (k, name)
        assert np.array_equal(both.frame[rows], alone.frame + first_frame)
        assert np.array_equal(both.sent_frame[rows], alone.sent_frame + first_frame)
        first_frame += len(segs)
        every = _timestamp_reference(segs, keep_negative=True)
        dropped += len(every) - len(_timestamp_reference(segs))
    assert dropped > 0  # (else nothing moves)


def _sampled_at_the_top(c: int) -> npt.NDArray[np.int64]:
    """Values whose evenly spaced sample (order_stats') holds only the largest: its brackets
    miss every rank below them, so the selection must run in place after all."""
    v = np.arange(c, dtype=np.int64)
    v[(np.arange(SAMPLE) * c) // SAMPLE] = 10**12
    return v


@pytest.mark.parametrize(
    "values",
    [
        np.random.default_rng(4).integers(0, 1 << 40, 3000),
        np.random.default_rng(5).integers(0, 4, 3000),  # much repeated: brackets overflow
        np.random.default_rng(6).integers(30_000_000, 36_000_000, 100_000),
        np.random.default_rng(7).exponential(1e6, 2000).astype(np.int64),
        np.arange(5000),
        np.arange(5000)[::-1],
        np.r_[np.arange(2500), np.arange(2500)[::-1]],
        np.full(1000, 7),
        _sampled_at_the_top(1000),
        _sampled_at_the_top(FEW + 1),
        np.random.default_rng(8).integers(0, 1000, FEW),  # the last size selected in place
        np.random.default_rng(9).integers(0, 1000, FEW + 1),
        np.array([5]),
    ],
    ids=[
        "random",
        "repeats",
        "large",
        "exponential",
        "ascending",
        "descending",
        "organ-pipe",
        "equal",
        "sample-at-top",
        "sample-at-top-few",
        "few",
        "few+1",
        "one",
    ],
)
def test_order_stats_are_the_sorted_values_at_their_ranks(values) -> None:  # type: ignore[no-untyped-def]
    """The path RTT's min, median and p95 (path_rtt's ranks) and any other pair of ranks."""
    c = int(values.shape[0])
    expected = np.sort(values)
    ranks = [((c - 1) // 2, int(np.ceil(0.95 * c)) - 1), (0, c - 1), (c // 3, c // 3)]
    for k1, k2 in ranks:
        v = np.r_[np.full(3, -1), values, np.full(2, -1)].astype(np.int64)  # inside a range
        scratch = np.empty(SAMPLE + 2 * (c // 4 + 65), np.int64)
        got = order_stats(v, 3, c, k1, k2, scratch)
        assert got == (expected[0], expected[k1], expected[k2])
        assert np.array_equal(np.sort(v[3 : 3 + c]), expected)  # reordered, nothing lost
        assert v[:3].tolist() == [-1] * 3 and v[3 + c :].tolist() == [-1] * 2
