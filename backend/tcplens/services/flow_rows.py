"""The ``flows`` table's rows of one analysis, written by the analysis child as a file in COPY's
text format that the worker streams into PostgreSQL.

A capture of many short connections has tens of thousands of flows: building them in the
worker (parse the whole report, one dict and one JSON encoding per row, a multi-row INSERT)
took 5.4 s for 16,500 flows; written here while the child has the report in memory and sent with
COPY it is a fraction of that. Text format rather than CSV: CSV doubles every quote of the JSON
columns (the csv module then took as long as encoding the JSON).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

# In the file's column order (the COPY statement names them).
FLOW_COLUMNS = (
    "capture_id",
    "flow_id",
    "client",
    "server",
    "start_s",
    "duration_s",
    "bytes_total",
    "packets",
    "throughput_bps",
    "retransmissions",
    "time_lost_s",
    "limiting_factor",
    "summary",
    "series_keys",
)
COPY_FLOWS = f"COPY flows ({', '.join(FLOW_COLUMNS)}) FROM STDIN"
NULL = b"\\N"  # COPY text format's NULL


def flow_time_lost(findings: Iterable[Mapping[str, Any]]) -> dict[int, float]:
    """Time lost per flow: the sum over findings of the diagnosis's own per-flow time
    (``evidence.flow_time_lost_s``, the seconds its ``factor_shares`` show); a finding stored
    before that field existed shares its time lost equally among the flows it names."""
    lost: dict[int, float] = {}
    for finding in findings:
        flows = finding.get("flows") or []
        per_flow = (finding.get("evidence") or {}).get("flow_time_lost_s")
        seconds = finding.get("time_lost_s") or 0.0
        for flow_id in flows:
            own = per_flow.get(str(flow_id)) if per_flow else None
            add = own if own is not None else seconds / len(flows)
            lost[int(flow_id)] = lost.get(int(flow_id), 0.0) + add
    return lost


def write_flow_rows(
    path: Path,
    report: Mapping[str, Any],
    *,
    capture_id: str,
    series_keys: Mapping[int, Mapping[str, Any]],
) -> int:
    """One CSV row per flow of ``report`` (DESIGN.md's flow object in ``summary``, the sortable
    metrics beside it, and where its series rows are: ``series_keys`` by flow id); the number
    of rows."""
    lost = flow_time_lost(report.get("findings", []))
    count = 0
    with path.open("wb") as file:
        for flow in report.get("flows", []):
            flow_id = int(flow["id"])
            total = int(flow["bytes"]["client_to_server"]) + int(flow["bytes"]["server_to_client"])
            duration = float(flow["duration_s"])
            factor = flow.get("limiting_factor")
            fields = (
                _text(capture_id),
                b"%d" % flow_id,
                _text(str(flow["client"])[:64]),
                _text(str(flow["server"])[:64]),
                repr(float(flow["start_s"])).encode(),
                repr(duration).encode(),
                b"%d" % total,
                b"%d" % int(flow["packets"]),
                repr(8.0 * total / duration if duration > 0 else 0.0).encode(),
                b"%d" % int(flow["retransmissions"]),
                repr(lost.get(flow_id, 0.0)).encode(),
                NULL if factor is None else _text(str(factor)),
                _escape(orjson.dumps(flow)),
                _escape(orjson.dumps(series_keys.get(flow_id, {}))),
            )
            file.write(b"\t".join(fields) + b"\n")
            count += 1
    return count


def _text(value: str) -> bytes:
    return _escape(value.encode())


def _escape(value: bytes) -> bytes:
    """COPY text format: backslash escapes itself, tab and newline end a field and a row (compact
    JSON has no raw tab or newline, but its own escapes use backslashes)."""
    return (
        value.replace(b"\\", b"\\\\")
        .replace(b"\t", b"\\t")
        .replace(b"\n", b"\\n")
        .replace(b"\r", b"\\r")
    )
