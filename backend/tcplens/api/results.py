"""Analysis results of one capture: flows, findings, one flow, a flow's series.

Each endpoint answers with a read of ``reads`` that ``shared`` registers too, under
``/shared/{token}/…`` for share links, so the two can never drift apart.
"""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from tcplens.api import reads
from tcplens.api.auth import ReaderDep, ServiceDep
from tcplens.api.deps import SessionDep
from tcplens.api.schemas import FindingOut, FlowFramesOut, FlowOut, FlowPageOut, SeriesOut

router = APIRouter(prefix="/captures/{capture_id}", tags=["results"])


@router.get("/flows", response_model=FlowPageOut, summary=reads.FLOWS_DOC)
def get_flows(
    session: SessionDep,
    viewer: ReaderDep,
    capture_id: uuid.UUID,
    sort: reads.SortParam = "id",
    order: reads.OrderParam = "asc",
    limit: reads.LimitParam = 500,
    offset: reads.OffsetParam = 0,
) -> FlowPageOut:
    return reads.read_flows(session, viewer, capture_id, sort, order, limit, offset)


@router.get("/findings", response_model=list[FindingOut], summary="Findings, most important first")
def get_findings(session: SessionDep, viewer: ReaderDep, capture_id: uuid.UUID) -> list[FindingOut]:
    return reads.read_findings(session, viewer, capture_id)


@router.get("/flows/{flow_id}", response_model=FlowOut, summary="One flow")
def get_flow(
    session: SessionDep, viewer: ReaderDep, capture_id: uuid.UUID, flow_id: reads.FlowIdPath
) -> FlowOut:
    return reads.read_flow(session, viewer, capture_id, flow_id)


@router.get(
    "/flows/{flow_id}/series",
    response_model=SeriesOut,
    responses=reads.SERIES_RESPONSES,
    summary="A flow's time series with level of detail",
    description=reads.SERIES_DOC,
)
def get_series(
    request: Request,
    session: SessionDep,
    viewer: ReaderDep,
    service: ServiceDep,
    capture_id: uuid.UUID,
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
        viewer,
        capture_id,
        flow_id,
        direction,
        start_s,
        end_s,
        max_points,
    )


@router.get(
    "/flows/{flow_id}/frames",
    response_model=FlowFramesOut,
    summary=reads.FRAMES_DOC,
)
def get_flow_frames(
    session: SessionDep,
    viewer: ReaderDep,
    service: ServiceDep,
    capture_id: uuid.UUID,
    flow_id: reads.FlowIdPath,
) -> FlowFramesOut:
    return reads.flow_frames(session, service, viewer, capture_id, flow_id)


@router.get(
    "/flows/{flow_id}/packets",
    response_class=StreamingResponse,
    responses=reads.PACKETS_RESPONSES,
    summary="The flow's packets as a capture file",
    description=reads.PACKETS_DOC,
)
def get_flow_packets(
    session: SessionDep,
    viewer: ReaderDep,
    service: ServiceDep,
    capture_id: uuid.UUID,
    flow_id: reads.FlowIdPath,
) -> StreamingResponse:
    return reads.flow_packets(session, service, viewer, capture_id, flow_id)
