"""``/api/v1/compare``: two captures of the same transfer, before and after a change."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from tcplens.api.auth import ViewerDep
from tcplens.api.deps import SessionDep
from tcplens.api.schemas import ComparisonOut
from tcplens.services.comparison import compare_captures

router = APIRouter(tags=["compare"])


@router.get(
    "/compare",
    response_model=ComparisonOut,
    summary="Compare two captures of the same transfer (before and after a change)",
    description="Findings resolved, remaining and new (matched by cause and server), the "
    "transfers matched by server and size with durations, rates and the speed-up, and BEFORE's "
    "predictions next to what AFTER measured. Both captures must be done and in the caller's "
    "workspaces (404 `capture_not_found` otherwise, 409 `analysis_not_ready`); captures that "
    "share no server answer 422 `no_common_server`, no transfer of the same size 422 "
    "`different_transfers`.",
)
def compare(
    session: SessionDep,
    viewer: ViewerDep,
    before: Annotated[uuid.UUID, Query(description="capture id before the change")],
    after: Annotated[uuid.UUID, Query(description="capture id after the change")],
) -> ComparisonOut:
    return ComparisonOut.model_validate(compare_captures(session, viewer, before, after))
