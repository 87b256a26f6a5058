"""A flow is judged on its active time (DESIGN.md: ``factor_shares`` are shares of the flow's
active time): the minutes a connection sat open after its last exchange, or idle between uses,
neither hide what held it while it was busy nor count as that factor's time."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from tcplens.diagnosis.context import _union_per_row
from tcplens.diagnosis.rules import packet_loss
from tcplens.diagnosis.transfer import Connection
from tests.diagnosis.synthetic import connection, context, slow_start, transfer

TAIL_S = 600.0  # open, with nothing sent, after the transfer (a pooled connection, then its RST)


def test_union_per_row_counts_overlaps_once() -> None:
    row = np.array([0, 0, 0, 2], np.int64)
    t0 = np.array([0.0, 1.0, 5.0, 2.0])
    t1 = np.array([2.0, 3.0, 6.0, 4.0])
    assert _union_per_row(row, t0, t1, 4).tolist() == [4.0, 0.0, 2.0, 0.0]


def lossy_then_open(tail_s: float) -> Connection:
    """A 120-segment slow start at a 50 ms round trip whose 60th segment re-sends the 40th's
    data, on a connection left open ``tail_s`` after its last ACK."""
    tr = slow_start(segments=120, rtt=0.05)
    seq = tr.seq.copy()
    seq[60] = seq[40]
    lossy = transfer(tr.t, seq, tr.seq_end - tr.seq, tr.ack_t, tr.ack, tr.window)
    conn = connection(lossy, rtt=0.05)
    return replace(conn, end_s=conn.end_s + tail_s, duration_s=conn.duration_s + tail_s)


def test_an_open_tail_is_not_active_time() -> None:
    busy = context([lossy_then_open(0.0)]).busy_s[0]
    open_tail = context([lossy_then_open(TAIL_S)])
    assert open_tail.busy_s[0] == busy
    assert float(open_tail.facts.duration_s[0]) > TAIL_S


def test_loss_is_reported_on_a_connection_left_open() -> None:
    # The loss held the transfer for a good part of its active time: the same finding whether
    # or not the connection then stayed open ten minutes; its words give both times.
    found = packet_loss.detect(context([lossy_then_open(TAIL_S)]))
    plain = packet_loss.detect(context([lossy_then_open(0.0)]))
    assert [f.flows for f in found] == [(1,)] == [f.flows for f in plain]
    assert found[0].time_lost_s == plain[0].time_lost_s
    assert found[0].severity == plain[0].severity
    assert "of its 600 s (" in found[0].summary and " of it active)" in found[0].summary
    assert "of it active" not in plain[0].summary
