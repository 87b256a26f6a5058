"""Compare two captures of the caller's workspaces (``GET /api/v1/compare``): their stored
results, put back into the shape of ``tcplens analyze --json``, through the same pure comparison
the CLI uses (``tcplens.diagnosis.comparison``)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tcplens.db.captures import Capture, Finding, Flow
from tcplens.diagnosis.comparison import NothingToCompare, compare_reports
from tcplens.errors import InvalidInput
from tcplens.services.access import CaptureNotFound, Viewer, visible_capture
from tcplens.services.results import require_done

# Flows with payload read per capture: a comparison groups them by server, so this bounds the
# memory of one request (a capture of more flows than this is not one transfer to compare).
MAX_COMPARED_FLOWS = 20_000


class NoCommonServer(InvalidInput):
    code = "no_common_server"


class DifferentTransfers(InvalidInput):
    code = "different_transfers"


class TooManyFlowsToCompare(InvalidInput):
    code = "too_many_flows_to_compare"


_NOTHING = {"no_common_server": NoCommonServer, "different_transfers": DifferentTransfers}


def compare_captures(
    session: Session, viewer: Viewer, before_id: uuid.UUID, after_id: uuid.UUID
) -> dict[str, Any]:
    captures = [_workspace_capture(session, viewer, i) for i in (before_id, after_id)]
    for capture in captures:
        require_done(capture)
    reports = [report_of(session, capture) for capture in captures]
    before, after = captures
    try:
        result = compare_reports(reports[0], reports[1], before.filename, after.filename)
    except NothingToCompare as error:
        raise _NOTHING[error.code](str(error)) from None
    result["before"]["id"] = str(before.id)
    result["after"]["id"] = str(after.id)
    return result


def _workspace_capture(session: Session, viewer: Viewer, capture_id: uuid.UUID) -> Capture:
    """A capture of one of the viewer's workspaces; a share link compares nothing (404)."""
    if viewer.shared_capture_id is not None:
        raise CaptureNotFound("no such capture")
    return visible_capture(session, viewer, capture_id)


def report_of(session: Session, capture: Capture) -> dict[str, Any]:
    """The flows with payload and the findings of a done capture, as ``analyze --json`` has
    them."""
    with_payload = (Flow.capture_id == capture.id) & (Flow.bytes_total > 0)
    count = session.scalar(select(func.count()).select_from(Flow).where(with_payload)) or 0
    if count > MAX_COMPARED_FLOWS:
        raise TooManyFlowsToCompare(
            f"{capture.filename} has {count} flows with payload; a comparison takes captures of "
            f"one transfer (at most {MAX_COMPARED_FLOWS} flows)",
            limit=MAX_COMPARED_FLOWS,
        )
    flows = list(session.scalars(select(Flow.summary).where(with_payload).order_by(Flow.flow_id)))
    findings = list(
        session.scalars(
            select(Finding.body).where(Finding.capture_id == capture.id).order_by(Finding.rank)
        )
    )
    return {"capture": dict(capture.facts or {}), "flows": flows, "findings": findings}
