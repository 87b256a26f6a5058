"""The analysis as it runs inside its child process: capture file in, report and series files out.

Runs in a separate process so that its memory can be capped (RLIMIT_AS) and its time bounded
(the parent kills it), and so that a crash in a compiled kernel cannot take the worker down.
Results go to files in ``out_dir``: ``report.json`` (DESIGN.md's analyze JSON without events)
``series.arrow`` (every flow's series) and ``series_ranges.json``; a refused capture writes ``error.json`` instead.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path
from typing import Any

from tcplens.capture import CaptureError, read_capture
from tcplens.capture.table import Capture
from tcplens.report import analyse_capture
from tcplens.storage.series import encode_series
from tcplens.tcp.model import TcpAnalysis


def write_series(capture: Capture, analysis: TcpAnalysis, out_dir: Path) -> None:
    """Every flow's series in one file, rows in the segments' (flow, direction, frame) order, and
    the [start, stop) row range of each flow direction (``series_ranges.json``)."""
    seg = analysis.segments
    first = capture.info.first_ts_ns
    origin_ns = first if first is not None else analysis.capture_start_ns
    columns: dict[str, Any] = {
        # Seconds from the capture's first packet, the origin of every *_s in the report.
        "time_s": (seg.time_ns - origin_ns) / 1e9,
        "frame": seg.frame,
        "seq": seg.seq,
        "payload_len": seg.payload_len,
        "ack": seg.ack,
        "window": seg.window,
        "bytes_in_flight": seg.bytes_in_flight,
        "flags": seg.flags,
        "events": seg.events,
    }
    (out_dir / "series.arrow").write_bytes(encode_series(columns))
    offsets = seg.offsets
    ranges = {
        "flow_ids": analysis.flows.id.tolist(),
        "starts": offsets[:-1].tolist(),
        "stops": offsets[1:].tolist(),
    }
    (out_dir / "series_ranges.json").write_text(json.dumps(ranges))


def run(capture_path: str, out_dir: str, memory_bytes: int) -> None:
    """Entry point of the child process."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    out = Path(out_dir)
    try:
        capture = read_capture(capture_path)
        analysis, report = analyse_capture(capture)
    except CaptureError as exc:
        _refuse(out, "unreadable_capture", str(exc))
        return
    except MemoryError:
        _refuse(
            out,
            "analysis_memory_limit",
            f"the analysis needed more memory than the limit of {memory_bytes // 2**20} MiB",
        )
        return
    write_series(capture, analysis, out)
    (out / "report.json").write_text(json.dumps(report))


def _refuse(out: Path, code: str, message: str) -> None:
    (out / "error.json").write_text(json.dumps({"code": code, "message": message}))
