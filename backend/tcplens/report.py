"""Compose the ``tcplens analyze --json`` object (DESIGN.md) from a capture's analyses. Pure.

capture → TCP analysis → diagnosis → one JSON-ready dict. The web worker stores the same dict,
so the CLI and the API can never disagree about a capture.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

import tcplens
from tcplens.capture.table import Capture, endpoint_text
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
    """DESIGN.md ``flows`` entries, plus ``vantage`` (where the capture point sits) and
    ``window_scale`` (each side's shift; null when the handshake was not captured, because
    the windows of that side then cannot be read in bytes)."""
    f = analysis.flows
    rtt_min, rtt_med, rtt_p95 = f.rtt_min_ns, f.rtt_median_ns, f.rtt_p95_ns
    clients = _endpoints(f.client_addr, f.client_port)
    servers = _endpoints(f.server_addr, f.server_port)
    start_s = np.round((f.start_ns - origin_ns) / 1e9, 6).tolist()
    duration_s = np.round((f.end_ns - f.start_ns) / 1e9, 6).tolist()
    handshake = _ms_list(f.handshake_rtt_ns)
    rmin, rmed, rp95 = _ms_list(rtt_min), _ms_list(rtt_med), _ms_list(rtt_p95)
    retrans = (f.retransmissions_c2s + f.retransmissions_s2c).tolist()
    vantage = [VANTAGE_NAMES[v] for v in f.vantage.tolist()]
    timelines = timelines_json(analysis, origin_ns)
    scales = [
        {"client": None if c < 0 else c, "server": None if sv < 0 else sv}
        for c, sv in zip(
            f.window_scale_client.tolist(), f.window_scale_server.tolist(), strict=True
        )
    ]
    columns = zip(
        f.id.tolist(),
        clients,
        servers,
        start_s,
        duration_s,
        f.bytes_c2s.tolist(),
        f.bytes_s2c.tolist(),
        f.packets.tolist(),
        handshake,
        rmin,
        rmed,
        rp95,
        retrans,
        vantage,
        scales,
        timelines,
        strict=True,
    )
    out = []
    # one dict per flow: output formatting, not analysis
    for fid, cl, sv, st, du, b_cs, b_sc, pk, hs, r0, r1, r2, rt, va, ws, tl in columns:
        factor, shares = verdicts.get(fid, (None, {}))
        out.append(
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
                "factor_shares": dict(shares),
                "vantage": va,
                "window_scale": ws,
                "timeline": tl,
            }
        )
    return out


def timelines_json(analysis: TcpAnalysis, origin_ns: int) -> list[dict[str, Any]]:
    """Each flow's ``timeline`` (capture-relative seconds) for the waterfall, as a browser's
    network panel draws it: ``syn_s`` (the client's first SYN, so SYN retransmissions count as
    connection setup), ``handshake_done_s`` (the client's ACK of the SYN/ACK), ``first_data_s``
    / ``last_data_s`` (first and last packet carrying payload, either direction) and
    ``idle_gaps_s`` (``tcp.model.IdleGaps``). A time is null when its packet was not captured."""
    f, gaps = analysis.flows, analysis.idle_gaps
    n = len(f)
    syn_ns = f.first_syn_ns
    first_data, last_data = f.data_span_ns()
    # gap rows grouped by flow: sort by (flow, start), then cut at each flow's first row
    order = np.lexsort((gaps.start_ns, gaps.flow))
    gap_flow = gaps.flow[order]
    bounds = np.searchsorted(gap_flow, np.arange(n + 1))
    gap_s = np.round(
        (np.stack((gaps.start_ns[order], gaps.end_ns[order]), axis=1) - origin_ns) / 1e9, 6
    )
    gap_lists = gap_s.tolist()
    cuts = bounds.tolist()
    return [
        {
            "syn_s": sy,
            "handshake_done_s": hd,
            "first_data_s": fd,
            "last_data_s": ld,
            "idle_gaps_s": gap_lists[cuts[i] : cuts[i + 1]],
        }
        for i, (sy, hd, fd, ld) in enumerate(
            zip(
                _s_list(syn_ns, origin_ns),
                _s_list(f.handshake_ack_ns, origin_ns),
                _s_list(first_data, origin_ns),
                _s_list(last_data, origin_ns),
                strict=True,
            )
        )
    ]


def _s_list(ns: npt.NDArray[np.int64], origin_ns: int) -> list[float | None]:
    """Capture-relative seconds, None where the time is unknown (negative)."""
    s = np.round((ns - origin_ns) / 1e9, 6).tolist()
    return [None if v < 0 else x for v, x in zip(ns.tolist(), s, strict=True)]


def _endpoints(addr: npt.NDArray[np.uint8], port: npt.NDArray[np.uint16]) -> list[str]:
    """``endpoint_text`` for every row, formatting each distinct address once.

    A dict on the 16 address bytes, not ``np.unique(axis=0)``: the latter sorts rows
    lexicographically and takes seconds for 100k flows.
    """
    cache: dict[bytes, str] = {}
    out = []
    raw = np.ascontiguousarray(addr).tobytes()
    keys = [raw[i : i + 16] for i in range(0, len(raw), 16)]
    for key, p in zip(keys, port.tolist(), strict=True):
        text = cache.get(key)
        if text is None:
            # the host part of endpoint_text (brackets kept for IPv6), port appended per row
            text = cache[key] = endpoint_text(np.frombuffer(key, np.uint8), 0).removesuffix(":0")
        out.append(f"{text}:{p}")
    return out


def _ms_list(ns: npt.NDArray[np.int64]) -> list[float | None]:
    ms = np.round(ns / 1e6, 3).tolist()
    return [None if v < 0 else m for v, m in zip(ns.tolist(), ms, strict=True)]


def write_report(
    write: Callable[[memoryview], object],
    report: Mapping[str, Any],
    segments: Segments | None = None,
) -> None:
    """Write what ``tcplens analyze --json`` prints: ``report`` as one line of compact JSON,
    with DESIGN.md's ``events`` (``--events``: frames with at least one ``tcp.analysis`` flag,
    in frame order) as its last member when the analysis' ``segments`` are given.

    The same bytes as ``json.dumps({**report, "events": [...]}, separators=(",", ":"))``; the
    events are written by ``report_events`` without a dict per event."""
    # one C-encoder call for the report (ensure_ascii: the text is ASCII)
    text = json.dumps(report, separators=(",", ":")).encode("ascii")
    if segments is None:
        write(memoryview(text + b"\n"))
        return
    from tcplens.report_events import event_rows, write_events

    members = b"," if len(text) > 2 else b""  # text is "{...}"
    write(memoryview(text[:-1] + members + b'"events":'))
    write_events(write, *event_rows(segments))
    write(memoryview(b"}\n"))


def report_for_capture(capture: Capture, *, consume_packets: bool = False) -> dict[str, Any]:
    """capture → TCP analysis → report: what ``tcplens analyze --json`` prints (``write_report``
    adds the events)."""
    return analyse_capture(capture, consume_packets=consume_packets)[1]


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
    from tcplens.diagnosis import diagnose
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
