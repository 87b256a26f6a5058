"""``write_report`` encodes the report's flows with orjson where that gives json.dumps' bytes:
floats below 10^-4, NaN, infinities, escapes and non-ASCII text must still come out as
``json.dumps(report, separators=(",", ":"))`` writes them."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import numpy as np
import pytest

from tcplens.capture import read_capture
from tcplens.report import FLOWS_PER_CHUNK, _orjson_text, analyse_capture, write_report
from tests.capture.shared_captures import LAB, require


def flow(fid: int, start_s: Any = 1.5, shares: Any = None, client: str = "10.0.0.1:80") -> Any:
    """A flow object with the report's shape (values of the kinds compose_report writes)."""
    return {
        "id": fid,
        "client": client,
        "server": "[2001:db8::1e5]:443",
        "start_s": start_s,
        "duration_s": 0.134395,
        "bytes": {"client_to_server": 627, "server_to_client": 4857},
        "packets": 12,
        "handshake_rtt_ms": None,
        "rtt_ms": {"min": 30.121, "median": 30.137, "p95": 30.182},
        "retransmissions": 0,
        "limiting_factor": None if shares is None else "latency",
        "factor_shares": {} if shares is None else {"latency": shares},
        "vantage": "near_client",
        "window_scale": {"client": 2, "server": None},
        "timeline": {"syn_s": start_s, "idle_gaps_s": [[start_s, 13539.499]], "truncated": False},
    }


def written(report: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    write_report(out.write, report)
    return out.getvalue()


def expected(report: dict[str, Any]) -> bytes:
    return (json.dumps(report, separators=(",", ":")) + "\n").encode("ascii")


def report_of(flows: list[Any]) -> dict[str, Any]:
    return {"tcplens_version": "0.1.0", "capture": {"packets": 3}, "flows": flows, "findings": []}


# repr switches to an exponent below 10^-4 (orjson does not) and from 10^16 on (as orjson)
EXPONENT_BELOW = [1e-05, 1.2e-05, 9.99e-05, 2e-07, 5e-324, -1e-05, -5e-05, -2.5e-07]
SAME_IN_BOTH = [0.0, -0.0, 0.0001, -0.0001, 10.00005, 100.000012, 0.47140000000000004, 1e16, 1.5e16,
                1e300, -13539.364605, 123456789012345.6, 2**53 + 0.0]  # fmt: skip


@pytest.mark.parametrize("value", EXPONENT_BELOW + SAME_IN_BOTH)
def test_a_flow_float_is_written_as_json_dumps_writes_it(value: float) -> None:
    for flows in ([flow(1, start_s=value)], [flow(1, shares=value)]):
        assert written(report_of(flows)) == expected(report_of(flows))
    # orjson's text is taken exactly when it is json's
    assert (_orjson_text([flow(1, start_s=value)]) is None) == (value in EXPONENT_BELOW)


@pytest.mark.parametrize("share", [math.nan, math.inf, -math.inf, 1e308, 2**70, "x", True])
def test_shares_orjson_writes_differently_or_not_at_all_take_json(share: Any) -> None:
    report = report_of([flow(1, shares=share), flow(2, shares=1e308)])
    assert written(report) == expected(report)
    if isinstance(share, float) and not math.isfinite(share):
        assert _orjson_text(report["flows"]) is None  # orjson would write null


@pytest.mark.parametrize("client", ["h\u00e9te:80", "a\x01b", "a\x7fb", 'a"b\\c', "a\nb"])
def test_text_json_escapes_is_written_by_json(client: str) -> None:
    report = report_of([flow(1, client=client)])
    assert written(report) == expected(report)
    assert _orjson_text(report["flows"]) is None


def test_other_values_json_takes_and_orjson_does_not() -> None:
    for odd in (np.float64(0.25), (1, 2), 2**70):
        report = report_of([flow(1, start_s=odd)])
        assert written(report) == expected(report)
    with pytest.raises(TypeError):  # as json.dumps: the report is not JSON
        written(report_of([flow(1, start_s=np.int64(3))]))


def test_chunks_join_and_only_a_chunk_with_an_odd_float_takes_json() -> None:
    count = 2 * FLOWS_PER_CHUNK + 3
    flows = [flow(i, start_s=i / 7) for i in range(1, count + 1)]
    flows[FLOWS_PER_CHUNK + 5]["duration_s"] = 1.2e-05
    for report in (report_of(flows), report_of(flows[:FLOWS_PER_CHUNK]), report_of([])):
        assert written(report) == expected(report)
    chunks = [flows[i : i + FLOWS_PER_CHUNK] for i in range(0, count, FLOWS_PER_CHUNK)]
    assert [_orjson_text(c) is None for c in chunks] == [False, True, False]


def test_reports_without_flows_or_with_keys_json_converts() -> None:
    reports: list[dict[Any, Any]] = [{}, {"a": 1}, {"flows": "x"}, {1: 2, "flows": []}]
    for report in reports:
        assert written(report) == expected(report)


def test_lab_reports_are_json_dumps_of_the_report() -> None:
    require(LAB)
    for name in ("lossy_download.pcap", "no_reuse_uploads.pcap", "dns_delay_upload.pcap"):
        _analysis, report = analyse_capture(read_capture(str(LAB / name)))
        assert report["flows"], name
        assert written(report) == expected(report), name
        assert _orjson_text(report["flows"]) is not None, name


def test_an_orjson_writing_floats_otherwise_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcplens import report as report_module

    assert report_module._orjson_writes_floats_as_repr()  # the installed orjson: repr's floats
    monkeypatch.setattr(report_module, "_orjson_writes_floats_as_repr", lambda: False)
    report = report_of([flow(i, start_s=i * 1e15) for i in range(1, 40)])
    assert _orjson_text(report["flows"]) is None
    assert written(report) == expected(report)
