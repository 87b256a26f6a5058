"""The labelling's connections are shared out to the threads in parts of about equal work, and
the labels never depend on how they were shared out."""

from __future__ import annotations

import numpy as np

from tcplens.capture import read_capture
from tcplens.diagnosis.from_analysis import (
    KernelColumns,
    flow_facts,
    labelled_rows,
    labelled_time,
)
from tcplens.tcp.analyze import analyze_tcp
from tcplens.tcp.grouping import equal_work_parts
from tests.capture.shared_captures import LAB, require


def test_parts_hold_about_the_same_number_of_rows() -> None:
    # one big connection first: a part of its own, the small ones share the other
    assert equal_work_parts(np.array([0, 100, 101, 102]), 2).tolist() == [0, 1, 3]
    # equal connections: equal halves, thirds
    equal = np.arange(0, 70, 10)  # 6 connections of 10 rows
    assert equal_work_parts(equal, 2).tolist() == [0, 3, 6]
    assert equal_work_parts(equal, 3).tolist() == [0, 2, 4, 6]
    # never more parts than connections, never an empty part
    assert equal_work_parts(np.array([0, 5, 9]), 8).tolist() == [0, 1, 2]
    assert equal_work_parts(np.array([0, 5]), 1).tolist() == [0, 1]


def test_labels_do_not_depend_on_how_the_connections_are_shared_out() -> None:
    require(LAB)
    capture = read_capture(LAB / "no_reuse_uploads.pcap")
    origin = capture.info.first_ts_ns
    assert origin is not None
    analysis = analyze_tcp(capture.packets, origin)
    rows = labelled_rows(flow_facts(analysis, origin))
    assert rows.size >= 4
    cols = KernelColumns(analysis)
    results = [labelled_time(cols, origin, rows, parts=k) for k in (1, 2, 3, rows.size)]
    first = results[0]
    for other in results[1:]:
        assert np.array_equal(first.flows, other.flows)
        assert np.array_equal(first.seconds, other.seconds)
        assert np.array_equal(first.counts, other.counts)
        for name in ("flow", "t0", "t1", "factor", "frame0", "frame1", "stall_s"):
            assert np.array_equal(getattr(first.runs, name), getattr(other.runs, name))
