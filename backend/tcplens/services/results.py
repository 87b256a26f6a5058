"""Reading analysis results: flows (sortable), findings, one flow, and a flow's series with level
of detail. Callers have already resolved the capture through ``access.visible_capture``."""

from __future__ import annotations

import uuid
from typing import Any, Literal

import pyarrow as pa
from sqlalchemy import select
from sqlalchemy.orm import Session

from tcplens.db.captures import Capture, Finding, Flow
from tcplens.errors import Conflict, InvalidInput, NotFound
from tcplens.storage.blobs import BlobNotFoundError
from tcplens.storage.series import DIRECTIONS, SeriesFiles, SeriesWindow, reduce_series

FlowSort = Literal["id", "throughput", "duration", "retransmissions", "time_lost", "bytes", "start"]
_SORT_COLUMNS = {
    "id": Flow.flow_id,
    "throughput": Flow.throughput_bps,
    "duration": Flow.duration_s,
    "retransmissions": Flow.retransmissions,
    "time_lost": Flow.time_lost_s,
    "bytes": Flow.bytes_total,
    "start": Flow.start_s,
}
MAX_SERIES_POINTS = 100_000
# flows.flow_id is a PostgreSQL integer: no flow has a larger id (or position in a listing), and
# asking the database for one fails instead of finding nothing.
FLOW_ID_MAX = 2**31 - 1


class FlowNotFound(NotFound):
    code = "flow_not_found"


class AnalysisNotReady(Conflict):
    code = "analysis_not_ready"


def require_done(capture: Capture) -> None:
    if capture.status != "done":
        raise AnalysisNotReady(
            f"the analysis of this capture is {capture.status}",
            capture_status=capture.status,
        )


def flows_of(
    session: Session,
    capture: Capture,
    *,
    sort: FlowSort,
    descending: bool,
    limit: int,
    offset: int,
) -> tuple[list[Flow], int]:
    require_done(capture)
    column = _SORT_COLUMNS[sort]
    order = column.desc() if descending else column.asc()
    rows = list(
        session.scalars(
            select(Flow)
            .where(Flow.capture_id == capture.id)
            .order_by(order, Flow.flow_id)
            .limit(limit)
            .offset(offset)
        )
    )
    total = int(capture.facts.get("flows", 0)) if capture.facts else len(rows)
    return rows, total


def findings_of(session: Session, capture: Capture) -> list[Finding]:
    require_done(capture)
    return list(
        session.scalars(
            select(Finding).where(Finding.capture_id == capture.id).order_by(Finding.rank)
        )
    )


def top_findings(session: Session, capture_ids: list[uuid.UUID]) -> dict[uuid.UUID, Finding]:
    """Each capture's most important finding (rank 1: the core orders them by time lost, then
    severity), for the captures that have one."""
    if not capture_ids:
        return {}
    rows = session.scalars(
        select(Finding).where(Finding.capture_id.in_(capture_ids), Finding.rank == 1)
    )
    return {finding.capture_id: finding for finding in rows}


def flow_of(session: Session, capture: Capture, flow_id: int) -> Flow:
    require_done(capture)
    flow = session.get(Flow, (capture.id, flow_id))
    if flow is None:
        raise FlowNotFound(f"capture has no flow {flow_id}")
    return flow


def series_of(
    files: SeriesFiles,
    flow: Flow,
    *,
    direction: str,
    start_s: float | None,
    end_s: float | None,
    max_points: int,
) -> SeriesWindow:
    if direction not in DIRECTIONS:
        raise InvalidInput("direction must be one of " + ", ".join(DIRECTIONS), field="direction")
    if not 2 <= max_points <= MAX_SERIES_POINTS:
        raise InvalidInput(f"max_points must be within 2..{MAX_SERIES_POINTS}", field="max_points")
    if start_s is not None and end_s is not None and end_s < start_s:
        raise InvalidInput("'to' is before 'from'", field="to")
    key = flow.series_keys.get("key")
    span = flow.series_keys.get(direction)
    overview = flow.series_keys.get("overview") or {}
    if (
        start_s is None
        and end_s is None
        and span is not None
        and overview.get(direction) is not None
        and max_points <= int(overview["max_points"])
    ):
        return _overview(files, overview, direction, int(span[1]) - int(span[0]), max_points)
    if key is None or span is None:
        table = pa.table(
            {"time_s": pa.array([], pa.float64()), "events": pa.array([], pa.uint32())}
        )
    else:
        try:
            table = files.rows(str(key), int(span[0]), int(span[1]))
        except BlobNotFoundError as exc:
            raise FlowNotFound("the series of this flow are gone") from exc
    return reduce_series(table, start_s=start_s, end_s=end_s, max_points=max_points)


def _overview(
    files: SeriesFiles,
    overview: dict[str, Any],
    direction: str,
    points: int,
    max_points: int,
) -> SeriesWindow:
    """The whole flow from the overview stored at analysis time: as stored when asked at its
    resolution (a file read), else reduced further. Reducing the min/max rows of finer buckets
    keeps each coarser bucket's extremes, exactly when the finer buckets nest in the coarser ones
    and to within one finer bucket's time otherwise (the whole flow's first and last rows, which
    fix the buckets, are in both)."""
    start, stop = (int(v) for v in overview[direction])
    try:
        table = files.rows(str(overview["key"]), start, stop)
    except BlobNotFoundError as exc:
        raise FlowNotFound("the series of this flow are gone") from exc
    if max_points < int(overview["max_points"]):
        table = reduce_series(table, start_s=None, end_s=None, max_points=max_points).table
    return SeriesWindow(table, points, reduced=True)
