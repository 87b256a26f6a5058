"""Agreement with Wireshark's TCP analysis (TShark 4.0.17, ../shared/captures/oracle).

Issue 4's bar: for each event kind, precision and recall >= 0.98 over the lab and
practical-packet-analysis captures; data → ACK RTT within 1 ms (median) of Wireshark's
``ack_rtt`` where both give a sample; bytes in flight equal to Wireshark's (TShark 4.0 already
subtracts the last SACK blocks; where we deliberately differ — D-SACK blocks below the
cumulative ACK — see test_inflight.py).
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np

from tcplens.capture import read_capture
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.model import EVENT_NAMES, RTT_DATA_ACK, TcpAnalysis
from tests.capture.shared_captures import LAB, PRACTICAL, SHARED_CAPTURES, require, shared_files

ORACLE = SHARED_CAPTURES / "oracle"
THRESHOLD = 0.98


def captures() -> list[Path]:
    return shared_files(LAB, "*.pcap") + shared_files(PRACTICAL, "*.pcapng")


@cache
def analysed(path: Path) -> tuple[TcpAnalysis, dict[str, dict[str, object]]]:
    oracle = json.loads((ORACLE / f"{path.stem}.wireshark.json").read_text())["tcp_frames"]
    return analyze_tcp(read_capture(path).packets), oracle


def test_events_agree_with_wireshark_per_kind() -> None:
    require(ORACLE)
    files = captures()
    assert files, "no lab or practical-packet-analysis captures found"
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for path in files:
        result, oracle = analysed(path)
        seg = result.segments
        mine = {int(f): int(e) for f, e in zip(seg.frame, seg.events, strict=True)}
        assert set(mine) == {int(k) for k in oracle}, f"{path.name}: TCP frames differ"
        for key, facts in oracle.items():
            theirs = set(facts.get("flags", []))  # type: ignore[call-overload]
            bits = mine[int(key)]
            for i, name in enumerate(EVENT_NAMES):
                ours = bool(bits >> i & 1)
                tp[name] += ours and name in theirs
                fp[name] += ours and name not in theirs
                fn[name] += (not ours) and name in theirs
    lines, failures = [], []
    for name in EVENT_NAMES:
        precision = tp[name] / (tp[name] + fp[name]) if tp[name] + fp[name] else 1.0
        recall = tp[name] / (tp[name] + fn[name]) if tp[name] + fn[name] else 1.0
        lines.append(f"{name:24s} tp={tp[name]:5d} fp={fp[name]:4d} fn={fn[name]:4d} "
                     f"precision={precision:.3f} recall={recall:.3f}")  # fmt: skip
        if precision < THRESHOLD or recall < THRESHOLD:
            failures.append(name)
    print("\n".join(lines))
    assert not failures, "below 0.98 against Wireshark:\n" + "\n".join(lines)
    # the captures must actually exercise the common kinds, or this test proves nothing
    for name in ("retransmission", "fast_retransmission", "duplicate_ack", "window_full",
                 "window_update", "zero_window", "out_of_order", "keep_alive"):  # fmt: skip
        assert tp[name] > 0, name


def test_flows_are_wiresharks_streams() -> None:
    require(ORACLE)
    for path in captures():
        result, oracle = analysed(path)
        seg = result.segments
        flow_of = {int(f): int(fl) for f, fl in zip(seg.frame, seg.flow_column(), strict=True)}
        pairs = {(flow_of[int(k)], v["stream"]) for k, v in oracle.items()}
        # a one-to-one mapping between our flows and Wireshark's tcp.stream
        assert len({p[0] for p in pairs}) == len(pairs) == len({p[1] for p in pairs}), path.name
        assert len(result.flows) == len(pairs)


def test_rtt_matches_wireshark_ack_rtt() -> None:
    require(ORACLE)
    diffs = []
    for path in captures():
        result, oracle = analysed(path)
        r = result.rtt
        sel = r.kind == RTT_DATA_ACK
        ours = dict(zip(r.frame[sel].tolist(), r.rtt_ns[sel].tolist(), strict=True))
        for key, facts in oracle.items():
            if "ack_rtt" in facts and int(key) in ours:
                diffs.append(abs(float(facts["ack_rtt"]) * 1e9 - ours[int(key)]))  # type: ignore[arg-type]
    print(f"{len(diffs)} common RTT samples, median |diff| {np.median(diffs) / 1e6:.4f} ms")
    assert len(diffs) > 1000
    assert np.median(diffs) <= 1e6


def test_bytes_in_flight_match_wireshark() -> None:
    require(ORACLE)
    total = equal = 0
    for path in captures():
        result, oracle = analysed(path)
        seg = result.segments
        for frame, bif in zip(seg.frame, seg.bytes_in_flight, strict=True):
            theirs = oracle[str(int(frame))].get("bytes_in_flight", -1)
            if theirs == -1 and bif < 0:
                continue
            total += 1
            equal += theirs == int(bif)
    print(f"bytes in flight equal on {equal}/{total} data segments")
    assert total > 5000
    assert equal / total >= 0.99
