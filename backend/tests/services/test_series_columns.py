"""The graph-only series columns: each packet's first SACK block and the RTT sample it completes."""

from __future__ import annotations

import numpy as np

from tcplens.capture import read_capture
from tcplens.report import analyse_capture
from tcplens.services.analysis_child import graph_columns
from tcplens.tcp.model import (
    RETRANSMISSION,
    RTT_DATA_ACK,
    RTT_TIMESTAMP,
    SERVER_TO_CLIENT,
    TcpAnalysis,
)
from tests.capture.shared_captures import LAB, require


def _analysis(name: str) -> TcpAnalysis:
    require(LAB)
    analysis, _report = analyse_capture(read_capture(str(LAB / name)))
    return analysis


def test_rtt_samples_land_on_the_packet_that_completes_them() -> None:
    analysis = _analysis("lossy_download.pcap")
    columns = graph_columns(analysis)
    seg, rtt = analysis.segments, analysis.rtt
    has = ~np.isnan(columns["rtt_s"])
    # One sample per completing packet at most; every sample's packet carries one.
    assert has.sum() == len(np.unique(np.stack([rtt.flow, rtt.frame]), axis=1).T)
    # The completing packet travels opposite to the data it times, at the sample's time.
    rows = np.flatnonzero(has)
    first = int(np.flatnonzero(rtt.frame == seg.frame[rows[0]])[0])
    assert seg.direction[rows[0]] == 1 - rtt.direction[first]
    assert seg.time_ns[rows[0]] == rtt.time_ns[first]
    assert set(np.unique(columns["rtt_kind"][has])) <= {RTT_DATA_ACK, RTT_TIMESTAMP, 2, 3}
    assert (columns["rtt_kind"][~has] == -1).all()


def test_first_sack_block_of_the_receivers_duplicate_acks() -> None:
    analysis = _analysis("lossy_download.pcap")
    columns = graph_columns(analysis)
    seg = analysis.segments
    with_blocks = columns["sack_left_0"] >= 0
    assert with_blocks.sum() == len(seg.sack_rows) > 0
    # SACK blocks lie above the cumulative ACK they come with (RFC 2018 §3).
    assert (columns["sack_left_0"][with_blocks] > seg.ack[with_blocks]).all()
    assert (columns["sack_right_0"][with_blocks] > columns["sack_left_0"][with_blocks]).all()


def test_resent_column_counts_what_the_flow_reports() -> None:
    analysis = _analysis("lossy_download.pcap")
    columns = graph_columns(analysis)
    seg = analysis.segments
    # 67 re-sent segments, all from the server; Wireshark flags only 4 of them `retransmission`.
    assert int(columns["resent"].sum()) == 67 == int(analysis.flows.retransmissions_s2c[0])
    assert int(((seg.events & RETRANSMISSION) != 0).sum()) == 4
    assert (seg.direction[columns["resent"] == 1] == SERVER_TO_CLIENT).all()
