"""``/api/v1/shared/{token}/…``: the read endpoints of one capture, opened by a share link,
without login. Read-only by construction: only GET routes exist here."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from tcplens.api import reads
from tcplens.api.auth import ServiceDep, SharedCaptureDep
from tcplens.api.deps import SessionDep
from tcplens.api.schemas import (
    CaptureOut,
    FindingOut,
    FlowFramesOut,
    FlowOut,
    FlowPageOut,
    SeriesOut,
)

router = APIRouter(prefix="/shared/{token}", tags=["shared"])


@router.get("", response_model=CaptureOut, summary="The shared capture")
def shared_capture(session: SessionDep, shared: SharedCaptureDep) -> CaptureOut:
    return reads.read_capture(session, shared.viewer, shared.capture_id)


@router.get("/flows", response_model=FlowPageOut, summary="Flows of the shared capture")
def shared_flows(
    session: SessionDep,
    shared: SharedCaptureDep,
    sort: reads.SortParam = "id",
    order: reads.OrderParam = "asc",
    limit: reads.LimitParam = 500,
    offset: reads.OffsetParam = 0,
) -> FlowPageOut:
    return reads.read_flows(session, shared.viewer, shared.capture_id, sort, order, limit, offset)


@router.get("/findings", response_model=list[FindingOut], summary="Findings of the shared capture")
def shared_findings(session: SessionDep, shared: SharedCaptureDep) -> list[FindingOut]:
    return reads.read_findings(session, shared.viewer, shared.capture_id)


@router.get("/flows/{flow_id}", response_model=FlowOut, summary="One flow of the shared capture")
def shared_flow(
    session: SessionDep, shared: SharedCaptureDep, flow_id: reads.FlowIdPath
) -> FlowOut:
    return reads.read_flow(session, shared.viewer, shared.capture_id, flow_id)


@router.get(
    "/flows/{flow_id}/series",
    response_model=SeriesOut,
    responses=reads.SERIES_RESPONSES,
    summary="A flow's series of the shared capture",
    description=reads.SERIES_DOC,
)
def shared_series(
    request: Request,
    session: SessionDep,
    shared: SharedCaptureDep,
    service: ServiceDep,
    flow_id: reads.FlowIdPath,
    direction: reads.Direction = "client_to_server",
    start_s: reads.FromParam = None,
    end_s: reads.ToParam = None,
    max_points: reads.MaxPointsParam = 4000,
) -> SeriesOut | Response:
    return reads.read_series(
        request,
        session,
        service,
        shared.viewer,
        shared.capture_id,
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
    session: SessionDep, shared: SharedCaptureDep, service: ServiceDep
) -> StreamingResponse:
    return reads.original_file(session, service, shared.viewer, shared.capture_id)


@router.get(
    "/flows/{flow_id}/frames",
    response_model=FlowFramesOut,
    summary=reads.FRAMES_DOC,
)
def shared_flow_frames(
    session: SessionDep,
    shared: SharedCaptureDep,
    service: ServiceDep,
    flow_id: reads.FlowIdPath,
) -> FlowFramesOut:
    return reads.flow_frames(session, service, shared.viewer, shared.capture_id, flow_id)


@router.get(
    "/flows/{flow_id}/packets",
    response_class=StreamingResponse,
    responses=reads.PACKETS_RESPONSES,
    summary="The flow's packets as a capture file",
    description=reads.PACKETS_DOC,
)
def shared_flow_packets(
    session: SessionDep,
    shared: SharedCaptureDep,
    service: ServiceDep,
    flow_id: reads.FlowIdPath,
) -> StreamingResponse:
    return reads.flow_packets(session, service, shared.viewer, shared.capture_id, flow_id)
