"""The analysis as it runs inside its child process: capture file in, report and series files out.

Runs in a separate process so that its memory can be capped (RLIMIT_AS) and its time bounded
(the parent kills it), and so that a crash in a compiled kernel cannot take the worker down.
Results go to files in ``out_dir``: ``report.json`` (DESIGN.md's analyze JSON without events)
and ``series/<flow>-<direction>.arrow``; a refused capture writes ``error.json`` instead.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

import numpy as np

from tcplens.storage.series import DIRECTIONS, encode_series


def series_columns_of(analysis: Any, flow_row: int, direction: int) -> dict[str, np.ndarray]:
    """One direction of one flow, as the columns the graphs draw (TcpAnalysis.segments slice)."""
    seg = analysis.segments
    rows = seg.slice_of(flow_row, direction)
    time_s = (seg.time_ns[rows] - analysis.capture_start_ns) / 1e9
    return {
        "time_s": time_s,
        "frame": seg.frame[rows],
        "seq": seg.seq[rows],
        "payload_len": seg.payload_len[rows],
        "ack": seg.ack[rows],
        "window": seg.window[rows],
        "bytes_in_flight": seg.bytes_in_flight[rows],
        "flags": seg.flags[rows],
        "events": seg.events[rows],
    }


def write_series(analysis: Any, out_dir: Path) -> None:
    series_dir = out_dir / "series"
    series_dir.mkdir(parents=True, exist_ok=True)
    for flow_row in range(len(analysis.flows)):
        flow_id = int(analysis.flows.id[flow_row])
        for direction, name in enumerate(DIRECTIONS):
            data = encode_series(series_columns_of(analysis, flow_row, direction))
            (series_dir / f"{flow_id}-{name}.arrow").write_bytes(data)


def run(capture_path: str, out_dir: str, memory_bytes: int) -> None:
    """Entry point of the child process."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    out = Path(out_dir)
    from tcplens.capture import CaptureError
    from tcplens.tcp.report import analyze_file

    try:
        report, analysis = analyze_file(Path(capture_path))
    except CaptureError as exc:
        (out / "error.json").write_text(
            json.dumps({"code": "unreadable_capture", "message": str(exc)})
        )
        return
    except MemoryError:
        (out / "error.json").write_text(
            json.dumps(
                {
                    "code": "analysis_memory_limit",
                    "message": "the analysis needed more memory than the limit "
                    f"of {memory_bytes // 2**20} MiB",
                }
            )
        )
        return
    write_series(analysis, out)
    (out / "report.json").write_text(json.dumps(report))
