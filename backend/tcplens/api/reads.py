"""What the members' routes (``captures``, ``results``) and the share links' routes (``shared``)
answer about one capture: each read is a plain function of (viewer, capture id) that both
register, so the two can never drift apart; the query and path parameters they share; and the
conversions of the stored rows to the response schemas.
"""

from __future__ import annotations

import hashlib
import tempfile
import uuid
from collections.abc import Iterator
from typing import Annotated, Literal
from urllib.parse import quote

from fastapi import Path, Query, Request, Response
from fastapi.responses import StreamingResponse

from tcplens.api.deps import SessionDep
from tcplens.api.schemas import (
    CaptureError,
    CaptureOut,
    Evidence,
    FindingOut,
    FlowFramesOut,
    FlowOut,
    FlowPageOut,
    FlowSummary,
    Progress,
    SeriesOut,
    TopFinding,
)
from tcplens.db.captures import Capture, Finding, Flow
from tcplens.services import captures, flow_slice, results
from tcplens.services.access import Viewer, downloadable_capture, may_download, visible_capture
from tcplens.services.context import ServiceContext
from tcplens.storage.blobs import BlobNotFoundError
from tcplens.storage.series import (
    ARROW_STREAM_MEDIA_TYPE,
    EVENT_KINDS,
    series_to_arrow_stream,
    series_to_json,
)

FILE_CHUNK = 256 * 1024


def capture_out(capture: Capture, top_finding: Finding | None = None) -> CaptureOut:
    error = None
    if capture.status == "failed":
        error = CaptureError(
            code=capture.error_code or "analysis_failed",
            message=capture.error_message or "the analysis failed",
        )
    return CaptureOut(
        id=capture.id,
        workspace_id=capture.workspace_id,
        filename=capture.filename,
        sha256=capture.sha256,
        size_bytes=capture.size_bytes,
        format=capture.format,
        compression=capture.compression,
        status=capture.status,
        progress=Progress(
            stage=capture.stage,
            bytes_done=capture.progress_bytes,
            bytes_total=capture.size_bytes,
        ),
        error=error,
        facts=capture.facts,
        analyzer_version=capture.analyzer_version,
        top_finding=None if top_finding is None else top_finding_out(top_finding),
        timings_s=capture.timings,
        created_at=capture.created_at,
        started_at=capture.started_at,
        finished_at=capture.finished_at,
        download_allowed=True,
    )


def top_finding_out(finding: Finding) -> TopFinding:
    return TopFinding(
        code=finding.code,
        severity=finding.severity,
        factor=finding.factor,
        title=str(finding.body.get("title", "")),
        time_lost_s=finding.time_lost_s,
    )


def read_capture(session: SessionDep, viewer: Viewer, capture_id: uuid.UUID) -> CaptureOut:
    capture = visible_capture(session, viewer, capture_id)
    out = capture_out(capture, results.top_findings(session, [capture.id]).get(capture.id))
    out.download_allowed = may_download(viewer)
    return out


def original_file(
    session: SessionDep, service: ServiceContext, viewer: Viewer, capture_id: uuid.UUID
) -> StreamingResponse:
    capture = downloadable_capture(session, viewer, capture_id)
    try:
        reader = service.store.open_reader(capture.blob_key)
    except BlobNotFoundError as exc:
        raise captures.CaptureFileGone("the capture's file is gone") from exc

    def chunks() -> Iterator[bytes]:
        with reader:
            while block := reader.read(FILE_CHUNK):
                yield block

    # RFC 6266: an ASCII fallback for old clients, and the real name as UTF-8 in filename*
    # (RFC 8187), so a name in any script survives the download.
    safe_name = capture.filename.replace('"', "").encode("ascii", "replace").decode()
    utf8_name = quote(capture.filename, safe="")
    return StreamingResponse(
        chunks(),
        media_type="application/octet-stream",
        headers={
            "Content-Disposition": (
                f"attachment; filename=\"{safe_name}\"; filename*=UTF-8''{utf8_name}"
            ),
            "Content-Length": str(capture.size_bytes),
            "Cache-Control": "private, no-store",
        },
    )


SLICE_IN_MEMORY = 8 << 20  # a larger slice is spooled to a temporary file


def flow_frames(
    session: SessionDep,
    service: ServiceContext,
    viewer: Viewer,
    capture_id: uuid.UUID,
    flow_id: int,
) -> FlowFramesOut:
    capture = visible_capture(session, viewer, capture_id)
    frames = flow_slice.flow_frames(service.series, results.flow_of(session, capture, flow_id))
    return FlowFramesOut(
        frames=frames.numbers[: flow_slice.MAX_SLICE_FRAMES].tolist(),
        total=int(frames.numbers.size),
        max_frames=flow_slice.MAX_SLICE_FRAMES,
        start_s=frames.start_s,
    )


def flow_packets(
    session: SessionDep,
    service: ServiceContext,
    viewer: Viewer,
    capture_id: uuid.UUID,
    flow_id: int,
) -> StreamingResponse:
    """The flow's packets as a capture file (services/flow_slice): their payloads are the
    capture's, so the slice is served to whoever may download the capture, and no one else."""
    capture = downloadable_capture(session, viewer, capture_id)
    frames = flow_slice.flow_frames(service.series, results.flow_of(session, capture, flow_id))
    try:
        reader = service.store.open_reader(capture.blob_key)
    except BlobNotFoundError as exc:
        raise captures.CaptureFileGone("the capture's file is gone") from exc
    out = tempfile.SpooledTemporaryFile(max_size=SLICE_IN_MEMORY)  # noqa: SIM115 (closed below)
    try:
        with reader:
            cut = flow_slice.cut_slice(reader, frames.numbers, out)
    except BaseException:
        out.close()
        raise

    def chunks() -> Iterator[bytes]:
        with out:
            while block := out.read(FILE_CHUNK):
                yield block

    return StreamingResponse(
        chunks(),
        media_type="application/octet-stream",
        headers={
            "Content-Disposition": f'attachment; filename="flow-{flow_id}.{cut.format}"',
            "Content-Length": str(cut.size),
            "Cache-Control": "private, no-store",
            # the slice holds the flow's first `frames` frames (FlowFramesOut.frames) of `total`
            "X-Tcplens-Slice-Frames": str(cut.frames),
            "X-Tcplens-Flow-Frames": str(cut.flow_frames),
        },
    )


PACKETS_DOC = (
    "The flow's packets as a capture file in the original's format (pcap, or pcapng with its "
    "interfaces), decompressed: its first frames (at most "
    f"{flow_slice.MAX_SLICE_FRAMES:,}, at most {flow_slice.MAX_SLICE_BYTES >> 20} MiB), byte for "
    "byte. `X-Tcplens-Slice-Frames` says how many it holds, `X-Tcplens-Flow-Frames` how many the "
    "flow has; frame k of the file is the capture's frame `frames[k-1]` of `…/frames`. Served to "
    "whoever may download the capture file."
)
PACKETS_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"content": {"application/octet-stream": {}}}
}
FRAMES_DOC = "The capture's frame numbers of the flow's packets (the packet slice's numbering)"


SortParam = Annotated[results.FlowSort, Query(description="metric to sort by")]
OrderParam = Annotated[Literal["asc", "desc"], Query()]
Direction = Literal["client_to_server", "server_to_client"]
FlowIdPath = Annotated[int, Path(ge=0, le=results.FLOW_ID_MAX)]
LimitParam = Annotated[int, Query(ge=1, le=5000)]
OffsetParam = Annotated[int, Query(ge=0, le=results.FLOW_ID_MAX)]
# Seconds from the capture start; NaN and the infinities name no instant (422, not an empty graph).
FromParam = Annotated[float | None, Query(alias="from", allow_inf_nan=False)]
ToParam = Annotated[float | None, Query(alias="to", allow_inf_nan=False)]
MaxPointsParam = Annotated[int, Query(ge=2, le=results.MAX_SERIES_POINTS)]


def flow_out(flow: Flow) -> FlowOut:
    return FlowOut(
        id=flow.flow_id,
        client=flow.client,
        server=flow.server,
        start_s=flow.start_s,
        duration_s=flow.duration_s,
        bytes_total=flow.bytes_total,
        packets=flow.packets,
        throughput_bps=flow.throughput_bps,
        retransmissions=flow.retransmissions,
        time_lost_s=flow.time_lost_s,
        limiting_factor=flow.limiting_factor,
        summary=FlowSummary.model_validate(flow.summary),
    )


def finding_out(finding: Finding) -> FindingOut:
    body = finding.body
    return FindingOut(
        rank=finding.rank,
        code=finding.code,
        severity=finding.severity,
        factor=finding.factor,
        time_lost_s=finding.time_lost_s,
        title=str(body.get("title", "")),
        summary=str(body.get("summary", "")),
        fix=str(body.get("fix", "")),
        flows=[int(f) for f in body.get("flows", [])],
        evidence=Evidence.model_validate(body.get("evidence") or {}),
        if_fixed=body.get("if_fixed"),
    )


def read_flows(
    session: SessionDep,
    viewer: Viewer,
    capture_id: uuid.UUID,
    sort: results.FlowSort,
    order: Literal["asc", "desc"],
    limit: int,
    offset: int,
) -> FlowPageOut:
    capture = visible_capture(session, viewer, capture_id)
    rows, total = results.flows_of(
        session, capture, sort=sort, descending=order == "desc", limit=limit, offset=offset
    )
    return FlowPageOut(items=[flow_out(f) for f in rows], total=total)


def read_findings(session: SessionDep, viewer: Viewer, capture_id: uuid.UUID) -> list[FindingOut]:
    capture = visible_capture(session, viewer, capture_id)
    return [finding_out(f) for f in results.findings_of(session, capture)]


def read_flow(session: SessionDep, viewer: Viewer, capture_id: uuid.UUID, flow_id: int) -> FlowOut:
    capture = visible_capture(session, viewer, capture_id)
    return flow_out(results.flow_of(session, capture, flow_id))


def read_series(
    request: Request,
    session: SessionDep,
    service: ServiceContext,
    viewer: Viewer,
    capture_id: uuid.UUID,
    flow_id: int,
    direction: Direction,
    start_s: float | None,
    end_s: float | None,
    max_points: int,
) -> SeriesOut | Response:
    capture = visible_capture(session, viewer, capture_id)
    flow = results.flow_of(session, capture, flow_id)
    arrow = ARROW_STREAM_MEDIA_TYPE in request.headers.get("accept", "")
    # A result never changes for one analyzer version, so a graph re-fetching the same window
    # (zoom back out, another tab) gets 304 without the series being read again.
    identity = "|".join(
        map(
            str,
            (
                capture.id,
                capture.analyzer_version,
                flow_id,
                direction,
                start_s,
                end_s,
                max_points,
                arrow,
            ),
        )
    )
    etag = '"' + hashlib.sha256(identity.encode()).hexdigest()[:32] + '"'
    cache_headers = {"ETag": etag, "Cache-Control": "private, max-age=3600"}
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=cache_headers)
    window = results.series_of(
        service.series,
        flow,
        direction=direction,
        start_s=start_s,
        end_s=end_s,
        max_points=max_points,
    )
    if arrow:
        return Response(
            series_to_arrow_stream(window),
            media_type=ARROW_STREAM_MEDIA_TYPE,
            headers=cache_headers,
        )
    # Serialised directly (the shape of SeriesOut): validating tens of thousands of numbers
    # through the response model would cost more than the reduction itself.
    body = series_to_json(
        window,
        flow=flow_id,
        direction=direction,
        points_in_range=window.points_in_range,
        returned_points=window.table.num_rows,
        reduced=window.reduced,
        event_kinds=list(EVENT_KINDS),
    )
    return Response(body, media_type="application/json", headers=cache_headers)


FLOWS_DOC = "Flows of the capture, sortable by throughput, duration, retransmissions, time lost"
SERIES_DOC = (
    "One direction of one flow between `from` and `to` (seconds from the capture start): every "
    "point when there are at most `max_points`, otherwise per-bucket min/max of each column plus "
    "every point carrying an event mark. JSON, or Arrow IPC stream with "
    f"`Accept: {ARROW_STREAM_MEDIA_TYPE}`."
)
SERIES_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"content": {ARROW_STREAM_MEDIA_TYPE: {}}}
}
