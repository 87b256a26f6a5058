"""The labelling never fails on odd input: whatever a capture holds (no ACKs, unknown windows,
retransmissions everywhere, equal timestamps), every interval gets a label and shares stay
within [0, 1]."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcplens.diagnosis.finding import FACTORS, SEVERITY_RANK
from tcplens.diagnosis.rules import RULES
from tcplens.diagnosis.timeline import connection_intervals, factor_shares
from tests.diagnosis.synthetic import connection, context, transfer


@st.composite
def transfers(draw: st.DrawFn):  # type: ignore[no-untyped-def]
    n = draw(st.integers(1, 40))
    m = draw(st.integers(0, 40))
    gaps = draw(st.lists(st.floats(0, 0.3), min_size=n, max_size=n))
    t = np.cumsum(gaps)
    length = np.array(draw(st.lists(st.integers(1, 1500), min_size=n, max_size=n)))
    jumps = np.array(draw(st.lists(st.integers(-3000, 3000), min_size=n, max_size=n)))
    seq = np.maximum(1 + np.cumsum(np.concatenate(([0], length[:-1]))) + jumps * (jumps < 0), 1)
    ack_t = np.sort(np.array(draw(st.lists(st.floats(-0.1, 10), min_size=m, max_size=m))))
    ack = np.sort(np.array(draw(st.lists(st.integers(0, 60000), min_size=m, max_size=m))))
    window = np.array(draw(st.lists(st.integers(-1, 70000), min_size=m, max_size=m)))
    payload = draw(st.lists(st.integers(0, 100), min_size=m, max_size=m))
    lag = draw(st.floats(0, 0.2))
    return transfer(t, seq, length, ack_t, ack, window, lag_s=lag, ack_payload=payload or None)


@settings(max_examples=60, deadline=None)
@given(transfers(), st.floats(0.0, 0.3))
def test_every_interval_is_labelled_and_shares_are_bounded(tr, rtt) -> None:  # type: ignore[no-untyped-def]
    conn = connection(tr, rtt)
    spans = connection_intervals(conn)
    assert ((spans.factor >= -1) & (spans.factor < len(FACTORS))).all()
    shares = factor_shares(conn, spans)
    assert all(0.0 <= v <= 1.0 for v in shares.values())
    assert sum(shares.values()) <= 1.0 + 1e-6


@settings(max_examples=40, deadline=None)
@given(st.lists(transfers(), min_size=1, max_size=4), st.floats(0.001, 0.3))
def test_every_rule_copes_and_findings_are_well_formed(trs, rtt) -> None:  # type: ignore[no-untyped-def]
    trs = [dataclasses.replace(tr, flow=i + 1) for i, tr in enumerate(trs)]
    conns = [dataclasses.replace(connection(tr, rtt), flow=tr.flow) for tr in trs]
    ctx = context(conns)
    for rule in RULES:
        for f in rule.detect(ctx):
            assert f.code == rule.CODE and f.factor == rule.FACTOR
            assert f.severity in SEVERITY_RANK
            assert f.title and f.summary and f.fix
            assert f.time_lost_s is None or f.time_lost_s >= 0
            assert f.to_json()["evidence"]["frames"] == sorted(f.evidence.frames)
