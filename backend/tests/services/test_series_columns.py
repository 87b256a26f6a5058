"""The graph-only series columns: each packet's SACK blocks and the RTT sample it completes."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tcplens.capture import read_capture
from tcplens.report import analyse_capture
from tcplens.services.analysis_child import graph_columns, write_series
from tcplens.storage.series import decode_series
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
    assert has.sum() == len(np.unique(np.stack([rtt.flow_column(), rtt.frame]), axis=1).T)
    # The completing packet travels opposite to the data it times, at the sample's time.
    rows = np.flatnonzero(has)
    first = int(np.flatnonzero(rtt.frame == seg.frame[rows[0]])[0])
    assert seg.direction_of(rows[:1])[0] == 1 - rtt.direction[first]
    assert seg.time_ns[rows[0]] == rtt.time_ns[first]
    assert set(np.unique(columns["rtt_kind"][has])) <= {RTT_DATA_ACK, RTT_TIMESTAMP, 2, 3}
    assert (columns["rtt_kind"][~has] == -1).all()


def test_every_sack_block_of_the_receivers_acks() -> None:
    analysis = _analysis("lossy_download.pcap")
    columns = graph_columns(analysis)
    seg = analysis.segments
    blocks = int(seg.sack_count.max())
    assert blocks == 3  # with timestamps, 3 blocks fill the 40 bytes of options (RFC 2018 §3)
    assert f"sack_left_{blocks}" not in columns
    lefts = np.stack([columns[f"sack_left_{k}"] for k in range(blocks)], axis=1)
    rights = np.stack([columns[f"sack_right_{k}"] for k in range(blocks)], axis=1)
    present = lefts >= 0
    # Each packet carries as many blocks as it said; TShark counts 3711 on 2184 packets.
    assert (present.sum(axis=1) == seg.sack_count).all()
    assert int(present.sum()) == 3711 and int(present.any(axis=1).sum()) == 2184
    # one row per block: a packet's blocks in the order it sent them
    left, right = seg.sack_edges()
    rows = seg.sack_rows()
    nth = np.concatenate([np.arange(k) for k in seg.sack_count[np.unique(rows)]])
    assert (lefts[rows, nth] == left).all() and (rights[rows, nth] == right).all()
    assert rows.size == 3711
    # SACK blocks lie above the cumulative ACK they come with (RFC 2018 §3), right of left.
    acks = np.broadcast_to(seg.ack[:, None], lefts.shape)
    assert (lefts[present] > acks[present]).all()
    assert (rights[present] > lefts[present]).all()


def test_no_sack_block_columns_without_sack() -> None:
    columns = graph_columns(_analysis("rwnd_small_upload.pcap"))
    assert "sack_left_0" not in columns and "sack_right_0" not in columns


def test_resent_column_counts_what_the_flow_reports() -> None:
    analysis = _analysis("lossy_download.pcap")
    columns = graph_columns(analysis)
    seg = analysis.segments
    # 67 re-sent segments, all from the server; Wireshark flags only 4 of them `retransmission`.
    assert int(columns["resent"].sum()) == 67 == int(analysis.flows.retransmissions_s2c[0])
    assert int(((seg.events & RETRANSMISSION) != 0).sum()) == 4
    resent = np.flatnonzero(columns["resent"] == 1)
    assert (seg.direction_of(resent) == SERVER_TO_CLIENT).all()
    assert (seg.direction_column()[resent] == SERVER_TO_CLIENT).all()


def test_stored_flags_are_each_packets_tcp_flags_even_when_re_sent(tmp_path: Path) -> None:
    # Segments.flags also carries the pass's bits above the TCP flags (model.TCP_FLAGS): the
    # series file keeps the TCP flags alone, its resent and sack_count columns the rest
    require(LAB)
    capture = read_capture(str(LAB / "lossy_download.pcap"))
    analysis, _report = analyse_capture(capture)
    write_series(capture, analysis, tmp_path, "r")
    series = decode_series((tmp_path / "series.arrow").read_bytes())
    frame = np.asarray(series.column("frame"))
    flags = np.asarray(series.column("flags"))
    assert flags.dtype == np.uint16
    assert (flags == capture.packets.tcp_flags[frame - 1]).all()
    assert int(np.asarray(series.column("resent")).sum()) == 67
    assert int(np.asarray(series.column("sack_count")).sum()) == 3711
