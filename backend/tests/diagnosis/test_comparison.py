"""Matching two analyses: transfers by server and size (whatever the number of connections),
findings by cause and server; regressions; refusals when there is nothing to compare."""

from __future__ import annotations

from typing import Any

import pytest

from tcplens.diagnosis.comparison import NothingToCompare, compare_reports
from tests.diagnosis.pairs import NO_REUSE, RWND, report

SERVER = "192.0.2.2:8080"


def flow(fid: int, start: float, end: float, nbytes: int, server: str = SERVER) -> dict[str, Any]:
    return {
        "id": fid,
        "client": f"192.0.2.1:{40000 + fid}",
        "server": server,
        "start_s": start,
        "duration_s": end - start + 0.01,
        "bytes": {"client_to_server": 100, "server_to_client": nbytes - 100},
        "timeline": {"syn_s": start, "last_data_s": end},
    }


def finding(code: str, flows: list[int], severity: str = "high", **extra: Any) -> dict[str, Any]:
    return {"code": code, "severity": severity, "title": code, "flows": flows, **extra}


def test_ten_connections_before_match_one_pooled_connection_after() -> None:
    before = {
        "flows": [flow(i + 1, i * 0.2, i * 0.2 + 0.18, 100_000) for i in range(10)],
        "findings": [
            finding(
                "no-connection-reuse",
                list(range(1, 11)),
                if_fixed={"duration_s": 0.8, "rate_bps": 1e7, "basis": "b"},
            ),
        ],
    }
    after = {
        "flows": [flow(1, 5.0, 6.0, 1_000_000)],
        "findings": [
            finding("slow-start-bound", [1], "low"),
            finding("round-trip-bound", [1], "info"),
        ],
    }
    result = compare_reports(before, after, "b.pcap", "a.pcap")
    [t] = result["transfers"]
    assert (t["server"], t["bytes"], t["before_connections"], t["after_connections"]) == (
        SERVER,
        1_000_000,
        10,
        1,
    )
    assert t["before_s"] == pytest.approx(1.98) and t["after_s"] == pytest.approx(1.0)
    assert result["speedup"] == pytest.approx(1.98)
    assert result["resolved"] == ["no-connection-reuse"]
    assert result["remaining"] == [] and result["new"] == []  # low and info are not compared
    [p] = t["predictions"]
    assert p["code"] == "no-connection-reuse" and p["vs_after"] == pytest.approx(0.8)
    assert "in 10 connections before and 1 connection after" in result["summary"]


def test_a_slower_after_with_a_new_cause_is_a_regression() -> None:
    before = {"flows": [flow(1, 0.0, 0.5, 2_000_000)], "findings": []}
    after = {
        "flows": [flow(3, 1.0, 3.0, 2_000_100), flow(4, 1.0, 1.1, 500, "198.51.100.9:53")],
        "findings": [finding("receiver-window-limited", [3], "medium")],
    }
    result = compare_reports(before, after, "b", "a")
    assert result["new"] == ["receiver-window-limited"] and result["resolved"] == []
    assert result["speedup"] == pytest.approx(0.25)
    assert "4.0× slower: a regression" in result["summary"]
    assert result["unmatched_servers"] == {"before": [], "after": ["198.51.100.9:53"]}


def test_findings_match_by_server_as_well_as_cause() -> None:
    other = "192.0.2.3:443"
    before = {
        "flows": [flow(1, 0, 1, 1000), flow(2, 0, 1, 1000, other)],
        "findings": [finding("dns-delay", [1])],
    }
    after = {
        "flows": [flow(1, 0, 1, 1000), flow(2, 0, 1, 1000, other)],
        "findings": [finding("dns-delay", [2])],
    }
    result = compare_reports(before, after, "b", "a")
    statuses = {(f["server"], f["status"]) for f in result["findings"]}
    assert statuses == {(SERVER, "resolved"), (other, "new")}


def test_no_common_server_is_refused() -> None:
    a = {"flows": [flow(1, 0, 1, 1000)], "findings": []}
    b = {"flows": [flow(1, 0, 1, 1000, "203.0.113.5:80")], "findings": []}
    with pytest.raises(NothingToCompare) as refused:
        compare_reports(a, b, "one.pcap", "two.pcap")
    assert refused.value.code == "no_common_server"
    assert "share no server" in str(refused.value) and "203.0.113.5:80" in str(refused.value)


def test_real_pairs_resolve_their_cause_and_swapped_report_it_new() -> None:
    for pair, cause, connections in (
        (NO_REUSE, "no-connection-reuse", (10, 1)),
        (RWND, "receiver-window-limited", (1, 1)),
    ):
        before, after = report(pair, "before"), report(pair, "after")
        forward = compare_reports(before, after, "before", "after")
        assert cause in forward["resolved"] and cause not in forward["remaining"]
        [t] = forward["transfers"]
        assert (t["before_connections"], t["after_connections"]) == connections
        assert forward["speedup"] > 1.5
        [p] = [p for p in t["predictions"] if p["code"] == cause]
        assert 0.5 < p["vs_after"] < 2.0
        swapped = compare_reports(after, before, "after", "before")
        assert cause in swapped["new"]
        assert swapped["speedup"] == pytest.approx(1 / forward["speedup"], rel=1e-3)


def test_two_transfers_of_different_sizes_are_not_compared() -> None:
    with pytest.raises(NothingToCompare) as refused:
        compare_reports(report(NO_REUSE, "before"), report(RWND, "after"), "reuse", "rwnd")
    assert refused.value.code == "different_transfers"
    assert "1001 KB before, 2.0 MB after" in str(refused.value)
