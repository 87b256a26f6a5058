"""The analysis as it runs inside its child process: capture file in, result files out.

Runs in a separate process so that its memory can be capped (RLIMIT_AS) and its time bounded
(the parent kills it), and so that a crash in a compiled kernel cannot take the worker down.
Results go to files in ``out_dir``: ``series.arrow`` (every flow's series),
``series_overview.arrow`` (the whole-flow level of detail of the long ones), ``flows.copy`` (the
flows table's rows, for COPY: services.flow_rows) and ``result.json`` (DESIGN.md's analyze JSON
without ``flows`` and events, plus ``flow_count``); a refused capture writes ``error.json``.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tcplens.capture import CaptureError, read_capture
from tcplens.capture.table import Capture
from tcplens.report import analyse_capture
from tcplens.services.flow_rows import write_flow_rows
from tcplens.storage.series import DIRECTIONS, OVERVIEW_POINTS, overview_rows, write_series_file
from tcplens.tcp.model import TcpAnalysis


def write_series(
    capture: Capture, analysis: TcpAnalysis, out_dir: Path, results_key: str
) -> dict[int, dict[str, Any]]:
    """Every flow's series in one file, rows in the segments' (flow, direction, frame) order;
    returns each flow's ``series_keys`` (the flows row's pointer into the files, which the worker
    stores under ``results_key``): the file's key and each direction's [start, stop) rows.

    Flow directions longer than the graphs' first request (``OVERVIEW_POINTS``) also get their
    whole-flow reduction stored (``series_overview.arrow``, ranges ``overview``): reducing a
    million rows takes tens of milliseconds, reading the result a fraction of one.
    """
    seg = analysis.segments
    first = capture.info.first_ts_ns
    origin_ns = first if first is not None else analysis.capture_start_ns
    ack = seg.unwrapped_ack()
    columns: dict[str, Any] = {
        # Seconds from the capture's first packet, the origin of every *_s in the report.
        "time_s": (seg.time_ns - origin_ns) / 1e9,
        "frame": seg.frame,
        "seq": seg.unwrapped_seq(),  # (int64, as the graphs read them)
        "payload_len": seg.payload_len,
        "ack": ack,
        "window": seg.window,
        "bytes_in_flight": seg.bytes_in_flight,
        "flags": seg.tcp_flags,  # (without the analysis' bits above them: model.TCP_FLAGS)
        "events": seg.events.astype(np.uint32),  # the series file's type (16 bits in memory)
        **graph_columns(analysis, ack),
    }
    write_series_file(out_dir / "series.arrow", columns)
    offsets = seg.offsets
    rows, overview = overview_rows(columns, offsets[:-1], offsets[1:])
    if len(rows):
        write_series_file(
            out_dir / "series_overview.arrow",
            {name: np.asarray(values)[rows] for name, values in columns.items()},
        )
    bounds = offsets.tolist()  # 2 per flow: client_to_server, server_to_client
    keys: dict[int, dict[str, Any]] = {}
    for row, flow_id in enumerate(analysis.flows.id.tolist()):
        series: dict[str, Any] = {"key": f"{results_key}/series.arrow"}
        spans: dict[str, Any] = {}
        for direction, name in enumerate(DIRECTIONS):
            k = 2 * row + direction
            series[name] = [bounds[k], bounds[k + 1]]
            if overview[k] is not None:
                spans[name] = overview[k]
        if spans:
            # The whole-flow level of detail of the long directions, stored (services/results).
            series["overview"] = {
                "key": f"{results_key}/series_overview.arrow",
                "max_points": OVERVIEW_POINTS,
                **spans,
            }
        keys[flow_id] = series
    return keys


def graph_columns(
    analysis: TcpAnalysis, unwrapped_ack: npt.NDArray[np.int64] | None = None
) -> dict[str, npt.NDArray[Any]]:
    """Per-segment columns only the graphs draw: the SACK blocks of each packet in the order sent
    (RFC 2018: the first holds the most recently received data) as ``sack_left_k``/``sack_right_k``,
    -1 where a packet has fewer, and the RTT sample each packet completes (it acknowledges or
    echoes data of the other direction), NaN / -1 where none.

    Block columns exist only up to the most blocks any packet carried (none without SACK): eight
    int64 columns would otherwise add 64 bytes to every row of every capture's series.
    ``unwrapped_ack``: the segments' ``unwrapped_ack()``, if the caller has it already."""
    seg = analysis.segments
    n = len(seg)
    sack_count = seg.sack_count  # (made on demand from the flags)
    blocks = int(sack_count.max()) if n else 0
    sack: dict[str, npt.NDArray[Any]] = {}
    if blocks:
        # one row per block, a packet's blocks consecutive and in the order sent
        rows = seg.sack_rows()
        first = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if rows.size else rows
        nth = np.arange(rows.size) - np.repeat(first, np.diff(np.r_[first, rows.size]))
        edges = seg.sack_edges(unwrapped_ack)
    for k in range(blocks):
        kth = nth == k
        for edge, values in zip(("left", "right"), edges, strict=True):
            column = np.full(n, -1, dtype=np.int64)
            column[rows[kth]] = values[kth]
            sack[f"sack_{edge}_{k}"] = column
    rtt_s = np.full(n, np.nan)
    rtt_kind = np.full(n, -1, dtype=np.int8)
    rtt = analysis.rtt
    if len(rtt) and n:
        # each sample's completing packet is its Segments row (RttSamples.row). Several samples
        # can complete on one packet (an ACK and a timestamp echo): the first in the analysis's
        # order wins, so write them in reverse.
        rows, kinds, rtt_ns = rtt.row[::-1], rtt.kind[::-1], rtt.rtt_ns[::-1]
        rtt_s[rows] = rtt_ns / 1e9
        rtt_kind[rows] = kinds
    return {
        # Every data segment that re-sends sequence space: what the graphs mark as retransmissions,
        # the same count as the flow's ``retransmissions`` (tcp/resent.py), 1/0.
        "resent": seg.resent.astype(np.uint8),
        "sack_count": sack_count,
        **sack,
        "rtt_s": rtt_s,
        "rtt_kind": rtt_kind,
    }


class Reporter:
    """The child's side of its pipe to the worker: ``(stage, bytes_done, bytes_total, time)``
    messages, a bounded number of them: one per stage (reading, analysing, diagnosing, storing,
    finished) and the reader's byte steps (at most ~100)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._stage = "reading"

    def stage(self, name: str) -> None:
        self._stage = name
        self._send(0, 0)

    def read_bytes(self, done: int, total: int) -> None:
        self._send(done, total)

    def _send(self, done: int, total: int) -> None:
        # wall-clock time: the worker turns the stamps into the job's timings
        self._connection.send((self._stage, done, total, time.time()))


def run(
    capture_path: str,
    out_dir: str,
    memory_bytes: int,
    connection: Connection,
    capture_id: str,
    results_key: str,
) -> None:
    """Entry point of the child process; ``results_key`` is where the worker will put the
    series files (the flow rows point into them)."""
    _cap_address_space(memory_bytes)
    out = Path(out_dir)
    reporter = Reporter(connection)
    try:
        reporter.stage("reading")
        capture = read_capture(capture_path, progress=reporter.read_bytes)
        # write_series reads the capture's info only: the analysis may consume its packets
        analysis, report = analyse_capture(capture, on_stage=reporter.stage, consume_packets=True)
        reporter.stage("storing")
        series_keys = write_series(capture, analysis, out, results_key)
        count = write_flow_rows(
            out / "flows.copy", report, capture_id=capture_id, series_keys=series_keys
        )
        result = {key: value for key, value in report.items() if key != "flows"}
        (out / "result.json").write_text(json.dumps({**result, "flow_count": count}))
        reporter.stage("finished")
    except CaptureError as exc:
        _refuse(out, "unreadable_capture", str(exc))
    except (MemoryError, OSError) as exc:
        # Over the cap, numpy raises MemoryError and mmap (the reader maps the file) ENOMEM.
        if isinstance(exc, OSError) and exc.errno != errno.ENOMEM:
            raise
        _refuse(
            out,
            "analysis_memory_limit",
            f"the analysis needed more memory than the limit of {memory_bytes // 2**20} MiB",
        )
    finally:
        connection.close()


def _cap_address_space(memory_bytes: int) -> None:
    """RLIMIT_AS at the address space in use now plus ``memory_bytes``: the setting bounds what
    the analysis adds, not the ~0.8 GB of address space the loaded libraries (numpy, numba's
    LLVM, pyarrow) already reserve before the first byte is read."""
    in_use = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        pages = int(Path("/proc/self/statm").read_text().split()[0])
        in_use = pages * os.sysconf("SC_PAGE_SIZE")
    limit = in_use + memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _refuse(out: Path, code: str, message: str) -> None:
    (out / "error.json").write_text(json.dumps({"code": code, "message": message}))
