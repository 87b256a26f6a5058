"""``/api/v1/shared/{token}/…``: the read endpoints of one capture, opened by a share link,
without login. Read-only by construction: only GET routes exist here."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from tcplens.api import captures as capture_routes
from tcplens.api import results as result_routes
from tcplens.api.auth import ServiceDep, SharedViewerDep
from tcplens.api.deps import SessionDep
from tcplens.api.schemas import CaptureOut, FindingOut, FlowOut, FlowPageOut, SeriesOut

router = APIRouter(prefix="/shared/{token}", tags=["shared"])


@router.get("", response_model=CaptureOut, summary="The shared capture")
def shared_capture(session: SessionDep, viewer: SharedViewerDep) -> CaptureOut:
    assert viewer.shared_capture_id is not None
    return capture_routes.read_capture(session, viewer, viewer.shared_capture_id)


@router.get("/flows", response_model=FlowPageOut, summary="Flows of the shared capture")
def shared_flows(
    session: SessionDep,
    viewer: SharedViewerDep,
    sort: result_routes.SortParam = "id",
    order: result_routes.OrderParam = "asc",
    limit: result_routes.LimitParam = 500,
    offset: result_routes.OffsetParam = 0,
) -> FlowPageOut:
    assert viewer.shared_capture_id is not None
    return result_routes.read_flows(
        session, viewer, viewer.shared_capture_id, sort, order, limit, offset
    )


@router.get("/findings", response_model=list[FindingOut], summary="Findings of the shared capture")
def shared_findings(session: SessionDep, viewer: SharedViewerDep) -> list[FindingOut]:
    assert viewer.shared_capture_id is not None
    return result_routes.read_findings(session, viewer, viewer.shared_capture_id)


@router.get("/flows/{flow_id}", response_model=FlowOut, summary="One flow of the shared capture")
def shared_flow(
    session: SessionDep, viewer: SharedViewerDep, flow_id: result_routes.FlowIdPath
) -> FlowOut:
    assert viewer.shared_capture_id is not None
    return result_routes.read_flow(session, viewer, viewer.shared_capture_id, flow_id)


@router.get(
    "/flows/{flow_id}/series",
    response_model=SeriesOut,
    responses=result_routes.SERIES_RESPONSES,
    summary="A flow's series of the shared capture",
    description=result_routes.SERIES_DOC,
)
def shared_series(
    request: Request,
    session: SessionDep,
    viewer: SharedViewerDep,
    service: ServiceDep,
    flow_id: result_routes.FlowIdPath,
    direction: result_routes.Direction = "client_to_server",
    start_s: result_routes.FromParam = None,
    end_s: result_routes.ToParam = None,
    max_points: result_routes.MaxPointsParam = 4000,
) -> SeriesOut | Response:
    assert viewer.shared_capture_id is not None
    return result_routes.read_series(
        request,
        session,
        service,
        viewer,
        viewer.shared_capture_id,
        flow_id,
        direction,
        start_s,
        end_s,
        max_points,
    )


@router.get(
    "/file",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/octet-stream": {}}}},
    summary="The shared capture's original file",
)
def shared_file(
    session: SessionDep, viewer: SharedViewerDep, service: ServiceDep
) -> StreamingResponse:
    assert viewer.shared_capture_id is not None
    return capture_routes.original_file(session, service, viewer, viewer.shared_capture_id)
