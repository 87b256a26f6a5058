"""``/api/v1/captures``: upload, list, read, delete, and the original file."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response, status
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect

from tcplens.api import reads, uploads
from tcplens.api.auth import ReaderDep, ServiceDep, WriterDep
from tcplens.api.deps import SessionDep
from tcplens.api.rate_limit import bucket_of
from tcplens.api.schemas import (
    CaptureIdsIn,
    CaptureOut,
    CapturePageOut,
    JobOut,
    UploadAccepted,
)
from tcplens.services import captures, jobs_view, results

router = APIRouter(prefix="/captures", tags=["captures"])


@router.post(
    "",
    status_code=status.HTTP_202_ACCEPTED,
    response_model=UploadAccepted,
    summary="Upload a capture (multipart field `file`, or the raw bytes with ?filename=)",
    openapi_extra={
        "requestBody": {
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                },
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
            }
        }
    },
)
async def upload_capture(
    request: Request,
    response: Response,
    viewer: WriterDep,
    service: ServiceDep,
    filename: Annotated[str | None, Query(max_length=1024)] = None,
    workspace_id: uuid.UUID | None = None,
) -> UploadAccepted:
    uploads_bucket = bucket_of(request, "upload_bucket", service.settings.uploads_per_minute)
    uploads_bucket.take(str(viewer.user_id), "uploads")
    limit = service.settings.max_upload_bytes
    header = request.headers.get("content-length")
    # str.isdigit() also accepts '²' (latin-1 0xB2), which int() refuses: ASCII digits only
    declared = int(header) if header is not None and header.isascii() and header.isdigit() else None
    multipart = uploads.is_multipart(request)
    if declared is not None and declared > limit + uploads.MULTIPART_OVERHEAD:
        # Refused before a byte is read; streaming still counts, for chunked bodies.
        raise captures.UploadTooLarge(
            f"the upload is larger than the limit of {limit} bytes", limit_bytes=limit
        )
    # The file is at least the body less the multipart envelope around it.
    least = (
        None if declared is None else declared - (uploads.MULTIPART_OVERHEAD if multipart else 0)
    )
    usage = await run_in_threadpool(captures.room_for_upload, service, viewer, workspace_id, least)
    if multipart:
        part_name, chunks = await uploads.multipart_file(request, limit)
        filename = filename or part_name
    else:
        chunks = uploads.raw_body(request)
    try:
        received = await captures.receive_upload(
            service, viewer, chunks, filename=filename, workspace_id=workspace_id, usage=usage
        )
    except ClientDisconnect as exc:
        # The client went away mid-upload: the partial file is already discarded.
        raise uploads.MalformedUpload("the upload was interrupted") from exc
    capture = received.capture
    job_status = await run_in_threadpool(jobs_view.job_status, service, capture.job_id)
    response.headers["Location"] = f"{request.url.path.rstrip('/')}/{capture.id}"
    if not received.analysing:
        response.status_code = status.HTTP_200_OK
    return UploadAccepted(
        capture=reads.capture_out(capture),
        job=JobOut(id=capture.job_id, status=job_status),
        created=received.created,
    )


@router.get(
    "",
    response_model=CapturePageOut,
    summary="The workspace's captures: sorted, searched by name or finding, one page at a time",
)
def list_captures(
    session: SessionDep,
    viewer: ReaderDep,
    workspace_id: uuid.UUID | None = None,
    sort: Annotated[
        captures.CaptureSort,
        Query(description="column to sort by; ties: newest first"),
    ] = "created",
    order: Annotated[Literal["asc", "desc"], Query()] = "desc",
    q: Annotated[
        str | None, Query(max_length=200, description="part of the file name (any case)")
    ] = None,
    finding: Annotated[
        str | None,
        Query(
            max_length=200,
            description="a finding's code (exactly) or part of its title: captures with one",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=captures.PAGE_SIZE_MAX)] = 50,
    offset: Annotated[int, Query(ge=0, le=captures.OFFSET_MAX)] = 0,
) -> CapturePageOut:
    page = captures.list_captures(
        session,
        viewer,
        workspace_id,
        sort=sort,
        descending=order == "desc",
        name=q.strip() if q else None,
        finding=finding.strip() if finding else None,
        limit=limit,
        offset=offset,
    )
    top = results.top_findings(session, [c.id for c in page.items])
    return CapturePageOut(
        items=[reads.capture_out(c, top.get(c.id)) for c in page.items],
        total=page.total,
        offset=offset,
        limit=limit,
    )


@router.post(
    "/delete",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete several captures, their files and their results: all of them or none",
)
def delete_captures(
    session: SessionDep, viewer: WriterDep, service: ServiceDep, body: CaptureIdsIn
) -> Response:
    captures.delete_captures(service, session, viewer, body.ids)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{capture_id}", response_model=CaptureOut, summary="One capture and its status")
def get_capture(session: SessionDep, viewer: ReaderDep, capture_id: uuid.UUID) -> CaptureOut:
    return reads.read_capture(session, viewer, capture_id)


@router.delete(
    "/{capture_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Delete a capture, its files and its results",
)
def delete_capture(
    session: SessionDep, viewer: WriterDep, service: ServiceDep, capture_id: uuid.UUID
) -> Response:
    captures.delete_captures(service, session, viewer, [capture_id])
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/{capture_id}/file",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/octet-stream": {}}}},
    summary="The original capture file",
)
def get_file(
    session: SessionDep, viewer: ReaderDep, service: ServiceDep, capture_id: uuid.UUID
) -> StreamingResponse:
    return reads.original_file(session, service, viewer, capture_id)
