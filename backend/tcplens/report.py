"""Compose the ``tcplens analyze --json`` object (DESIGN.md) from a capture's analyses. Pure.

capture → TCP analysis → diagnosis → one JSON-ready dict. The web worker stores the same dict,
so the CLI and the API can never disagree about a capture.
"""

from __future__ import annotations

import functools
import json
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt
import orjson

import tcplens
from tcplens.capture.table import Capture, encapsulation_text, endpoint_text
from tcplens.tcp.model import VANTAGE_NAMES, Segments, TcpAnalysis

# (limiting_factor, factor_shares) per flow id, from the diagnosis
FlowVerdicts = Mapping[int, tuple[str | None, Mapping[str, float]]]


def compose_report(
    capture: Capture,
    analysis: TcpAnalysis,
    *,
    findings: Sequence[Mapping[str, Any]] = (),
    verdicts: FlowVerdicts | None = None,
) -> dict[str, Any]:
    """The DESIGN.md ``analyze --json`` object for one capture, without ``events``
    (``write_report`` writes them from the analysis)."""
    info = capture.info
    origin = info.first_ts_ns if info.first_ts_ns is not None else analysis.capture_start_ns
    report: dict[str, Any] = {
        "tcplens_version": tcplens.__version__,
        "capture": {
            "format": info.format,
            "compression": info.compression,
            "packets": info.packets,
            "link_types": list(info.link_types),
            "duration_s": round(info.duration_s, 6),
            "truncated": info.truncated,
            "warnings": list(info.warnings),
        },
        "flows": flows_json(analysis, origin, verdicts or {}),
        "findings": [dict(f) for f in findings],
    }
    return report


def flows_json(
    analysis: TcpAnalysis, origin_ns: int, verdicts: FlowVerdicts
) -> list[dict[str, Any]]:
    """DESIGN.md ``flows`` entries, plus ``vantage`` (where the capture point sits),
    ``rtt_by_direction_ms`` (each direction's data → ACK round trip from the capture point),
    ``window_scale`` (each side's shift; null when the handshake was not captured, because
    the windows of that side then cannot be read in bytes) and ``encapsulation`` (the tunnels
    its packets came through, e.g. ``"VLAN+PPPoE"``; null for none).

    Columnar: each field is made for all flows at once (numpy, then ``tolist``) and the loop
    only assembles the dicts: a capture of 100k short flows has 100k of them."""
    f = analysis.flows
    factors, shares = _verdict_columns(f.id, verdicts)
    columns = zip(
        f.id.tolist(),
        _endpoints(f.client_addr, f.client_port),
        _endpoints(f.server_addr, f.server_port),
        np.round((f.start_ns - origin_ns) / 1e9, 6).tolist(),
        np.round(f.duration_ns / 1e9, 6).tolist(),
        f.bytes_c2s.tolist(),
        f.bytes_s2c.tolist(),
        f.packets.tolist(),
        _ms_list(f.handshake_rtt_ns),
        _ms_list(f.rtt_min_ns),
        _ms_list(f.rtt_median_ns),
        _ms_list(f.rtt_p95_ns),
        (f.retransmissions_c2s + f.retransmissions_s2c).tolist(),
        factors,
        shares,
        np.array(VANTAGE_NAMES, object)[f.vantage].tolist(),
        _none_if_negative(f.window_scale_client),
        _none_if_negative(f.window_scale_server),
        timelines_json(analysis, origin_ns),
        [encapsulation_text(layers) for layers in f.encapsulation.tolist()],
        zip(
            _direction_rtt(f.data_rtt_min_ns_c2s, f.data_rtt_median_ns_c2s),
            _direction_rtt(f.data_rtt_min_ns_s2c, f.data_rtt_median_ns_s2c),
            strict=True,
        ),
        strict=True,
    )
    # one dict per flow: output formatting, not analysis
    return [
        {
            "id": fid,
            "client": cl,
            "server": sv,
            "start_s": st,
            "duration_s": du,
            "bytes": {"client_to_server": b_cs, "server_to_client": b_sc},
            "packets": pk,
            "handshake_rtt_ms": hs,
            "rtt_ms": None if r0 is None else {"min": r0, "median": r1, "p95": r2},
            "retransmissions": rt,
            "limiting_factor": factor,
            "factor_shares": dict(share),
            "vantage": va,
            "window_scale": {"client": ws_c, "server": ws_s},
            "timeline": tl,
            "encapsulation": en,
            "rtt_by_direction_ms": {"client_to_server": by_dir[0], "server_to_client": by_dir[1]},
        }
        for (
            fid, cl, sv, st, du, b_cs, b_sc, pk, hs, r0, r1, r2, rt, factor, share, va, ws_c, ws_s, tl,
            en, by_dir,
        ) in columns
    ]  # fmt: skip


def timelines_json(analysis: TcpAnalysis, origin_ns: int) -> list[dict[str, Any]]:
    """Each flow's ``timeline`` (capture-relative seconds) for the waterfall, as a browser's
    network panel draws it: ``syn_s`` (the client's first SYN, so SYN retransmissions count as
    connection setup), ``handshake_done_s`` (the client's ACK of the SYN/ACK), ``first_data_s``
    / ``last_data_s`` (first and last packet carrying payload, either direction) and
    ``idle_gaps_s`` (``tcp.model.IdleGaps``). A time is null when its packet was not captured."""
    f, gaps = analysis.flows, analysis.idle_gaps
    n = len(f)
    first_data, last_data = f.data_span_ns()
    # gap rows grouped by flow: sort by (flow, start), then cut at each flow's first row
    order = np.lexsort((gaps.start_ns, gaps.flow))
    bounds = np.searchsorted(gaps.flow[order], np.arange(n + 1)).tolist()
    gap_s = np.round(
        (np.stack((gaps.start_ns[order], gaps.end_ns[order]), axis=1) - origin_ns) / 1e9, 6
    )
    gap_lists = gap_s.tolist()
    return [
        {
            "syn_s": sy,
            "handshake_done_s": hd,
            "first_data_s": fd,
            "last_data_s": ld,
            "idle_gaps_s": gap_lists[first:stop],
        }
        for sy, hd, fd, ld, first, stop in zip(
            _s_list(f.first_syn_ns, origin_ns),
            _s_list(f.handshake_ack_ns, origin_ns),
            _s_list(first_data, origin_ns),
            _s_list(last_data, origin_ns),
            bounds[:-1],
            bounds[1:],
            strict=True,
        )
    ]


_NO_SHARES: Mapping[str, float] = {}


def _verdict_columns(
    ids: npt.NDArray[np.int64], verdicts: FlowVerdicts
) -> tuple[list[str | None], list[Mapping[str, float]]]:
    """Each flow's ``limiting_factor`` and ``factor_shares`` (None and none for a flow the
    diagnosis gave no verdict), in the rows of ``ids``."""
    factors: list[str | None] = [None] * ids.size
    shares: list[Mapping[str, float]] = [_NO_SHARES] * ids.size
    if not verdicts or ids.size == 0:
        return factors, shares
    keys = np.fromiter(verdicts.keys(), np.int64, len(verdicts))
    order = np.argsort(ids, kind="stable")
    at = np.minimum(np.searchsorted(ids[order], keys), ids.size - 1)
    rows = order[at]
    found = ids[rows] == keys
    # one step per verdict (the diagnosis made one object per flow already), not per flow
    for row, ok, (factor, share) in zip(
        rows.tolist(), found.tolist(), verdicts.values(), strict=True
    ):
        if ok:
            factors[row], shares[row] = factor, share
    return factors, shares


def _none_if_negative(
    values: npt.NDArray[np.int64] | npt.NDArray[np.int8],
    shown: npt.NDArray[np.float64] | None = None,
) -> list[Any]:
    """``shown`` (default ``values``) as a list, None where ``values`` is negative (unknown)."""
    out = values if shown is None else shown
    unknown = values < 0
    if not unknown.any():
        return out.tolist()  # type: ignore[no-any-return]
    boxed = out.astype(object)  # Python floats and ints, as tolist makes them
    boxed[unknown] = None
    return boxed.tolist()  # type: ignore[no-any-return]


def _s_list(ns: npt.NDArray[np.int64], origin_ns: int) -> list[float | None]:
    """Capture-relative seconds, None where the time is unknown (negative)."""
    return _none_if_negative(ns, np.round((ns - origin_ns) / 1e9, 6))


def _direction_rtt(
    min_ns: npt.NDArray[np.int64], median_ns: npt.NDArray[np.int64]
) -> list[dict[str, float] | None]:
    """``{"min", "median"}`` in milliseconds per flow, None without a sample."""
    return [
        None if lo is None or mid is None else {"min": lo, "median": mid}
        for lo, mid in zip(_ms_list(min_ns), _ms_list(median_ns), strict=True)
    ]


def _ms_list(ns: npt.NDArray[np.int64]) -> list[float | None]:
    """Milliseconds, None where the duration is unknown (negative)."""
    return _none_if_negative(ns, np.round(ns / 1e6, 3))


def _endpoints(addr: npt.NDArray[np.uint8], port: npt.NDArray[np.uint16]) -> list[str]:
    """``endpoint_text`` for every row, formatting each distinct address once.

    Distinct addresses by sorting the 16 bytes as two 64-bit words, not
    ``np.unique(axis=0)``: the latter sorts rows lexicographically and takes seconds for
    100k flows."""
    if port.size == 0:
        return []
    words = np.ascontiguousarray(addr).view(np.uint64)  # (rows, 2)
    order = np.lexsort((words[:, 1], words[:, 0]))
    ordered = words[order]
    new = np.ones(port.size, bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    distinct = np.empty(port.size, np.int64)
    distinct[order] = np.cumsum(new) - 1
    # the host part of endpoint_text and its colon ("1.2.3.4:", "[::1]:"), the port appended
    hosts = [endpoint_text(addr[row], 0).removesuffix("0") for row in order[new].tolist()]
    per_row = np.array(hosts, object)[distinct].tolist()
    return list(map(operator.add, per_row, map(str, port.tolist())))


def write_report(
    write: Callable[[memoryview], object],
    report: Mapping[str, Any],
    segments: Segments | None = None,
) -> None:
    """Write what ``tcplens analyze --json`` prints: ``report`` as one line of compact JSON,
    with DESIGN.md's ``events`` (``--events``: frames with at least one ``tcp.analysis`` flag,
    in frame order) as its last member when the analysis' ``segments`` are given.

    The same bytes as ``json.dumps({**report, "events": [...]}, separators=(",", ":"))``: the
    ``flows`` are encoded by orjson wherever that gives the same bytes (``_write_flows``), the
    events by ``report_events`` without a dict per event. ``write`` must be done with each
    view when it returns (a file's or a stream's ``write`` is)."""
    flows = report.get("flows")
    if isinstance(flows, list) and all(isinstance(key, str) for key in report):
        # a dict's compact JSON: "{", its members' texts comma-separated, "}"
        write(memoryview(b"{"))
        for index, (key, value) in enumerate(report.items()):
            member = (b"," if index else b"") + json.dumps(key).encode("ascii") + b":"
            if key == "flows":
                write(memoryview(member))
                _write_flows(write, flows)
            else:
                write(memoryview(member + json.dumps(value, separators=_COMPACT).encode("ascii")))
    else:  # not compose_report's: json.dumps as it is (ensure_ascii: the text is ASCII)
        write(memoryview(json.dumps(report, separators=_COMPACT).encode("ascii")[:-1]))
    if segments is not None:
        from tcplens.report_events import event_rows, write_events

        write(memoryview(b',"events":' if report else b'"events":'))
        write_events(write, *event_rows(segments))
    write(memoryview(b"}\n"))


#: JSON as ``tcplens analyze`` prints it: no spaces.
_COMPACT = (",", ":")

#: Flows per orjson call: a chunk that orjson would write differently is written by json.dumps.
FLOWS_PER_CHUNK = 1024


def _write_flows(write: Callable[[memoryview], object], flows: list[Any]) -> None:
    """``json.dumps(flows)``'s bytes, a chunk of flows at a time, by orjson where it writes the
    chunk the same (``_orjson_text``; json's encoder took ~9 µs per flow, 0.9 s for a capture
    of 100k short connections, orjson ~1 µs), else by json.dumps."""
    write(memoryview(b"["))
    for start in range(0, len(flows), FLOWS_PER_CHUNK):
        chunk = flows[start : start + FLOWS_PER_CHUNK]
        text = _orjson_text(chunk)
        if text is None:
            text = json.dumps(chunk, separators=_COMPACT).encode("ascii")
        if start:
            write(memoryview(b","))
        write(memoryview(text)[1:-1])  # the members of "[...]"
    write(memoryview(b"]"))


def _orjson_text(flows: list[Any]) -> bytes | None:
    """orjson's text of ``flows`` when it is json.dumps' (compact, ``ensure_ascii``), else None.

    orjson writes ints, ASCII strings without escapes, None, bools, dicts and lists as json
    does, and a finite float as ``repr`` does (the shortest text that reads back, ``1e+16``
    from 10^16 on), except below 10^-4, where ``repr`` writes an exponent (``1.2e-05``) and
    orjson ``0.000012`` or ``2e-6``; it writes NaN and infinities as null (json: ``NaN``,
    ``Infinity``). So the text is refused when it has a character json escapes, a backslash
    (an escape: both escape control characters, their spellings are not compared here), or
    such a float. A flow's floats are seconds and milliseconds made from integer nanoseconds,
    always finite, and the diagnosis' factor shares, checked for NaN and infinities here."""
    if not _orjson_writes_floats_as_repr():
        return None
    try:
        text = orjson.dumps(flows)
    except TypeError:  # JSONEncodeError: a type or an int orjson does not take
        return None
    if not text.isascii() or b"\x7f" in text or b"\\" in text or not _finite_shares(flows):
        return None
    if b"-" in text and (b"e-" in text or b"-0.0000" in text):
        return None  # an exponent below 10^-4 or a negative float in (-10^-4, 0)
    at = text.find(b"0.0000")
    while at >= 0:  # a float in (0, 10^-4) when no digit comes before (not 10.00005)
        if not text[at - 1 : at].isdigit():
            return None
        at = text.find(b"0.0000", at + 1)
    return text


# floats from 10^-4 on, around repr's switch to an exponent at 10^16 and beyond
_FLOAT_PROBES = [0.0, -0.0, 1.0, -2.5, 0.1, 0.0001, 0.00012, 10.00005, 13539.364605,
                 0.47140000000000004, 123456789012345.6, 1e15, 9999999999999998.0, 1e16,
                 1.5e16, 1.2e30, -1e300, 1.7976931348623157e308]  # fmt: skip


@functools.cache
def _orjson_writes_floats_as_repr() -> bool:
    """Whether this orjson writes the floats repr writes the same way (orjson 3.11.7 changed its
    float text: ``1.2e+30``, was ``1.2e30``); if not, json.dumps writes every flow."""
    return orjson.dumps(_FLOAT_PROBES) == json.dumps(_FLOAT_PROBES, separators=_COMPACT).encode()


def _finite_shares(flows: list[Any]) -> bool:
    """Whether every flow's ``factor_shares`` are finite numbers (False if not a flow): their
    sum is finite when they all are (NaN and infinities carry through a sum; an overflow
    only refuses orjson's text)."""
    try:
        shares = chain.from_iterable(
            map(dict.values, map(operator.itemgetter("factor_shares"), flows))
        )
        return math.isfinite(sum(shares))
    except (KeyError, TypeError, OverflowError):
        return False


def analyse_capture(
    capture: Capture,
    *,
    on_stage: Callable[[str], None] | None = None,
    consume_packets: bool = False,
) -> tuple[TcpAnalysis, dict[str, Any]]:
    """The TCP analysis and the report of one capture: the web worker stores both (the report's
    rows in PostgreSQL, the analysis's per-flow series as files). ``on_stage`` is told
    "analysing" and then "diagnosing" as each step begins (the worker shows it as progress).

    ``consume_packets``: the caller never reads ``capture.packets``' per-packet columns again
    (reading one raises ``ReleasedColumnError``): the analysis reuses their memory as it is
    done with them (``analyze_tcp(consume=True)``; bulk_5M: ~200 MB fewer fresh pages). The
    capture's info, DNS messages and address table stay.
    """
    from tcplens.diagnosis.engine import diagnose
    from tcplens.tcp.analyze import analyze_tcp

    if on_stage is not None:
        on_stage("analysing")
    analysis = analyze_tcp(capture.packets, capture.info.first_ts_ns, consume=consume_packets)
    if on_stage is not None:
        on_stage("diagnosing")
    diagnosis = diagnose(capture, analysis)
    verdicts: dict[int, tuple[str | None, dict[str, float]]] = {
        flow: (v.limiting_factor, {str(k): x for k, x in v.factor_shares.items()})
        for flow, v in diagnosis.flows.items()
    }
    report = compose_report(
        capture,
        analysis,
        findings=diagnosis.findings_json(),
        verdicts=verdicts,
    )
    return analysis, report
