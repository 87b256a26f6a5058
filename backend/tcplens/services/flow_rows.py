"""The ``flows`` table's rows of one analysis, written by the analysis child as a CSV file that
the worker streams into PostgreSQL with COPY.

A capture of many short connections has tens of thousands of flows: building them in the
worker (parse the whole report, one dict and one JSON encoding per row, a multi-row INSERT)
took 5.4 s for 16,500 flows; written here while the child has the report in memory and sent with
COPY it is a fraction of that.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

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
COPY_FLOWS = f"COPY flows ({', '.join(FLOW_COLUMNS)}) FROM STDIN WITH (FORMAT csv)"


def flow_time_lost(findings: Iterable[Mapping[str, Any]]) -> dict[int, float]:
    """Time lost per flow: each finding's time lost shared equally among the flows it names."""
    lost: dict[int, float] = {}
    for finding in findings:
        flows = finding.get("flows") or []
        seconds = finding.get("time_lost_s") or 0.0
        for flow_id in flows:
            lost[int(flow_id)] = lost.get(int(flow_id), 0.0) + seconds / len(flows)
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
    with path.open("w", newline="") as file:
        # None is written as an unquoted empty field: NULL for COPY's csv format.
        writer = csv.writer(file)
        for flow in report.get("flows", []):
            flow_id = int(flow["id"])
            total = int(flow["bytes"]["client_to_server"]) + int(flow["bytes"]["server_to_client"])
            duration = float(flow["duration_s"])
            series = series_keys.get(flow_id, {})
            writer.writerow(
                (
                    capture_id,
                    flow_id,
                    str(flow["client"])[:64],
                    str(flow["server"])[:64],
                    repr(float(flow["start_s"])),
                    repr(duration),
                    total,
                    int(flow["packets"]),
                    repr(8.0 * total / duration if duration > 0 else 0.0),
                    int(flow["retransmissions"]),
                    repr(lost.get(flow_id, 0.0)),
                    flow.get("limiting_factor"),
                    json.dumps(flow, separators=(",", ":")),
                    json.dumps(series, separators=(",", ":")),
                )
            )
            count += 1
    return count
