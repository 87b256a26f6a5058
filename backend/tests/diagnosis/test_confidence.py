"""A finding's confidence inputs (issue 26 item 6): the snaplen that cut its flows' packets and
the clock jumps inside them, on captures rewritten in the test from a lab capture (a snaplen of
96 bytes; two halves spliced 2 hours apart)."""

from __future__ import annotations

import io
import struct
from typing import Any

import pytest

from tcplens.capture import read_capture
from tcplens.report import analyse_capture
from tests.capture.shared_captures import LAB, require

HOUR_S = 3600 * 2
RECORD = struct.Struct("<IIII")  # ts_sec, ts_usec, caplen, origlen (a little-endian pcap)


def _records(data: bytes) -> tuple[bytes, list[tuple[int, int, int, bytes]]]:
    """The file header and each record (seconds, microseconds, original length, bytes)."""
    head, at, out = data[:24], 24, []
    assert struct.unpack_from("<I", head)[0] == 0xA1B2C3D4
    while at < len(data):
        sec, usec, caplen, origlen = RECORD.unpack_from(data, at)
        at += RECORD.size
        out.append((sec, usec, origlen, data[at : at + caplen]))
        at += caplen
    return head, out


def _pcap(head: bytes, records: list[tuple[int, int, int, bytes]], snaplen: int) -> bytes:
    head = head[:16] + struct.pack("<I", snaplen) + head[20:]
    body = b"".join(
        RECORD.pack(sec, usec, len(frame), origlen) + frame for sec, usec, origlen, frame in records
    )
    return head + body


def _nagle() -> tuple[bytes, list[tuple[int, int, int, bytes]]]:
    require(LAB)
    return _records((LAB / "nagle_delack.pcap").read_bytes())


def _report(data: bytes) -> dict[str, Any]:
    _, report = analyse_capture(read_capture(io.BytesIO(data)))
    return report


def _nagle_finding(report: dict[str, Any]) -> dict[str, Any]:
    found: list[dict[str, Any]] = [
        f for f in report["findings"] if f["factor"] == "nagle_delayed_ack"
    ]
    [finding] = found
    return finding


def test_a_capture_its_snaplen_did_not_cut_says_so() -> None:
    head, records = _nagle()
    confidence = _nagle_finding(_report(_pcap(head, records, 262144)))["evidence"]["confidence"]
    assert confidence["snaplen"] is None
    assert confidence["packets_cut"] == 0
    assert confidence["clock_jumps"] == 0


def test_a_snaplen_of_96_bytes_is_a_confidence_input_and_changes_no_number() -> None:
    head, records = _nagle()
    whole = _report(_pcap(head, records, 262144))
    cut = [(s, u, o, frame[:96]) for s, u, o, frame in records]
    longer = sum(1 for *_, frame in records if len(frame) > 96)
    report = _report(_pcap(head, cut, 96))
    finding = _nagle_finding(report)
    confidence = finding["evidence"]["confidence"]
    assert confidence["snaplen"] == 96
    # every packet longer than 96 bytes (its flow's only: the capture is one connection)
    assert confidence["packets_cut"] == longer > 50
    # the sizes come from the IP headers: the same bytes, flows and finding
    assert report["flows"][0]["bytes"] == whole["flows"][0]["bytes"]
    assert finding["summary"] == _nagle_finding(whole)["summary"]
    assert finding["time_lost_s"] == _nagle_finding(whole)["time_lost_s"]


def test_a_clock_jump_inside_a_flow_is_a_confidence_input_and_no_time() -> None:
    """The capture's second half 2 hours later, as two captures spliced (``mergecap -a``): the
    flow's duration, its idle gaps and the finding's time lost do not count the jump."""
    head, records = _nagle()
    whole = _report(_pcap(head, records, 262144))
    half = len(records) // 2
    spliced = records[:half] + [(s + HOUR_S, u, o, f) for s, u, o, f in records[half:]]
    report = _report(_pcap(head, spliced, 262144))
    assert any("Packet times jump at 1 place" in w for w in report["capture"]["warnings"])
    finding = _nagle_finding(report)
    assert finding["evidence"]["confidence"]["clock_jumps"] == 1
    [flow], [flow_whole] = report["flows"], whole["flows"]
    # less than the time between the two packets around the splice (the time across it is none)
    gap = (records[half][0] - records[half - 1][0]) + (
        records[half][1] - records[half - 1][1]
    ) / 1e6
    assert abs(flow["duration_s"] - (flow_whole["duration_s"] - gap)) < 1e-6
    assert flow["timeline"]["idle_gaps_s"] == flow_whole["timeline"]["idle_gaps_s"] == []
    assert finding["time_lost_s"] <= _nagle_finding(whole)["time_lost_s"]
    assert finding["severity"] == _nagle_finding(whole)["severity"] == "high"


def test_a_segment_the_capture_missed_and_a_time_that_went_back_are_counted_once_each() -> None:
    """Record 18 (the server's 40-byte answer) left out: the server's next packet starts past
    the sequence it expected (Wireshark's ``lost_segment``). Record 37 (a server ACK) stamped
    10 µs before record 35, the server's packet before it: one timestamp backwards in its
    direction (record 36 between them is the client's, not compared)."""
    head, records = _nagle()
    assert len(records[18][3]) > 54 + 40 - 1 and len(records[37][3]) == len(records[35][3])
    *_, origlen, frame = records[37]
    at_us = records[35][0] * 1_000_000 + records[35][1] - 10
    records[37] = (at_us // 1_000_000, at_us % 1_000_000, origlen, frame)
    report = _report(_pcap(head, records[:18] + records[19:], 262144))
    confidence = _nagle_finding(report)["evidence"]["confidence"]
    assert confidence["packets_missing"] == 1
    assert confidence["timestamps_backwards"] == 1
    whole = _nagle_finding(_report(_pcap(head, _nagle()[1], 262144)))["evidence"]["confidence"]
    assert whole["packets_missing"] == whole["timestamps_backwards"] == 0


def test_no_factor_is_given_the_time_a_clock_jump_moved() -> None:
    """Spliced 2 hours apart at a third of the records, where the client waits for the
    server's answer: the labelling saw one wait of 2 hours there and called it the server's
    application delay (7200 s in a flow of 1.6 s). The time across the jump is none: the flow
    keeps the whole capture's verdict, its finding the same severity, and no finding counts
    more time than the flow lasted."""
    head, records = _nagle()
    whole = _report(_pcap(head, records, 262144))
    at = len(records) // 3
    spliced = records[:at] + [(s + HOUR_S, u, o, f) for s, u, o, f in records[at:]]
    report = _report(_pcap(head, spliced, 262144))
    [flow], [flow_whole] = report["flows"], whole["flows"]
    assert flow["limiting_factor"] == flow_whole["limiting_factor"] == "nagle_delayed_ack"
    assert flow["factor_shares"]["nagle_delayed_ack"] == pytest.approx(
        flow_whole["factor_shares"]["nagle_delayed_ack"], abs=0.02
    )
    codes = [f["code"] for f in report["findings"]]
    assert codes[0] == "nagle-delayed-ack"
    assert "application-delay" not in codes
    # its share of the time the flow was active, the jump not counted as activity
    assert report["findings"][0]["severity"] == whole["findings"][0]["severity"] == "high"
    assert all(f["time_lost_s"] <= flow["duration_s"] for f in report["findings"])
