"""Captures: receive an upload, look one up, list a workspace's (sorted, searched, paged), delete
some.

An upload is streamed: each chunk is hashed, counted against the size limit and written to the
blob store as it arrives, so memory stays bounded whatever the file size. The container format
is decided from the first bytes (never the file name). The capture row and its analysis job are
written in one transaction.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import ColumnElement, case, exists, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import InstrumentedAttribute, Session
from starlette.concurrency import run_in_threadpool

from tcplens.capture.compression import SNIFF_BYTES, sniff_format
from tcplens.db.captures import Capture, Finding
from tcplens.errors import (
    InvalidInput,
    NotFound,
    PermissionDenied,
    TooLarge,
    UnsupportedMediaType,
)
from tcplens.services import accounts, analysis_queue, storage_quota
from tcplens.services.access import Viewer, visible_capture, writable_workspace
from tcplens.services.context import ServiceContext
from tcplens.storage.blobs import BlobNotFoundError

SUPPORTED_FORMATS = ("pcap", "pcapng", "pcap.gz", "pcapng.gz", "pcap.zst", "pcapng.zst")
# Blob writes are batched so the thread hop per write is paid once per megabyte, not per packet
# of the request body.
WRITE_BATCH = 1024 * 1024
MAX_FILENAME = 255
PAGE_SIZE_MAX = 200
# Deeper than any list a person pages through; bounds the rows PostgreSQL skips for one page.
OFFSET_MAX = 1_000_000


class UnsupportedFormat(UnsupportedMediaType):
    code = "unsupported_format"
    title = "Not a packet capture"


class UploadTooLarge(TooLarge):
    code = "upload_too_large"
    title = "The file is too large"


class EmptyUpload(InvalidInput):
    code = "empty_upload"
    title = "The file is empty"


class NotCaptureOwner(PermissionDenied):
    code = "not_capture_owner"


def clean_filename(name: str | None) -> str:
    """The last path segment, without control characters; never empty."""
    base = (name or "").replace("\\", "/").rsplit("/", 1)[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    return base[:MAX_FILENAME] or "capture"


@dataclass(frozen=True)
class Received:
    capture: Capture
    created: bool  # False: the same bytes were already in this workspace
    # A new analysis was queued: a new capture, or the same bytes again after a failed analysis.
    analysing: bool


def room_for_upload(
    ctx: ServiceContext, viewer: Viewer, workspace_id: uuid.UUID | None, declared_bytes: int | None
) -> storage_quota.Usage:
    """The workspace's usage, refused at once when it is full or the upload's declared size
    cannot fit, or when the workspace has as many analyses waiting as it may (checked before a
    byte of the upload is read)."""
    target = writable_workspace(viewer, workspace_id)
    with ctx.sessionmaker() as session:
        analysis_queue.refuse_when_full(session, target, ctx.settings.max_queued_analyses)
        usage = storage_quota.usage(session, target, ctx.settings.workspace_quota_bytes)
    if usage.room_bytes == 0 or (declared_bytes is not None and declared_bytes > usage.room_bytes):
        raise usage.refuse(declared_bytes)
    return usage


async def receive_upload(
    ctx: ServiceContext,
    viewer: Viewer,
    chunks: AsyncIterator[bytes],
    *,
    filename: str | None,
    workspace_id: uuid.UUID | None,
    usage: storage_quota.Usage,
) -> Received:
    """Stream the upload into the store, then record it. ``usage`` is the workspace's at the
    start (``room_for_upload``): the upload may take the room it had left."""
    target = writable_workspace(viewer, workspace_id)
    limit = ctx.settings.max_upload_bytes
    capture_id = uuid.uuid4()
    blob_key = f"captures/{capture_id}/original"
    writer = await run_in_threadpool(ctx.store.open_writer, blob_key)
    digest = hashlib.sha256()
    size = 0
    head = b""
    container: str | None = None
    pending = bytearray()
    committed = False

    def absorb(batch: bytearray) -> None:
        # Hashed in the worker thread with the write: hashlib releases the GIL on big buffers,
        # so the event loop keeps receiving the next megabyte meanwhile.
        digest.update(batch)
        writer.write(batch)

    try:
        async for chunk in chunks:
            if not chunk:
                continue
            size += len(chunk)
            if size > limit:
                raise UploadTooLarge(
                    f"the upload is larger than the limit of {limit} bytes", limit_bytes=limit
                )
            if size > usage.room_bytes:
                raise usage.refuse(size)
            if container is None:
                head += chunk[: SNIFF_BYTES - len(head)]
                if len(head) >= SNIFF_BYTES:
                    container = _container_or_refuse(head)
            pending += chunk
            if len(pending) >= WRITE_BATCH:
                batch, pending = pending, bytearray()
                await run_in_threadpool(absorb, batch)
        if size == 0:
            raise EmptyUpload("the upload is empty", field="file")
        if container is None:
            container = _container_or_refuse(head)
        if pending:
            await run_in_threadpool(absorb, pending)
        await run_in_threadpool(writer.commit)
        committed = True
    finally:
        if not committed:
            await run_in_threadpool(writer.abort)
    try:
        return await run_in_threadpool(
            _record_upload,
            ctx,
            viewer,
            capture_id=capture_id,
            workspace_id=target,
            filename=clean_filename(filename),
            sha256=digest.hexdigest(),
            size=size,
            container=container,
            blob_key=blob_key,
        )
    except BaseException:
        # Refused (quota), or the database went away: the file has no row and never will.
        await run_in_threadpool(ctx.store.delete_prefix, f"captures/{capture_id}")
        raise


def _container_or_refuse(head: bytes) -> str:
    container = sniff_format(head)
    if container is None:
        raise UnsupportedFormat(
            "this is not a packet capture; supported formats: " + ", ".join(SUPPORTED_FORMATS),
            supported_formats=list(SUPPORTED_FORMATS),
        )
    return container


def _record_upload(
    ctx: ServiceContext,
    viewer: Viewer,
    *,
    capture_id: uuid.UUID,
    workspace_id: uuid.UUID,
    filename: str,
    sha256: str,
    size: int,
    container: str,
    blob_key: str,
) -> Received:
    with ctx.sessionmaker() as session:
        existing = _by_digest(session, workspace_id, sha256)
        if existing is None:
            # Under the workspace's row lock: concurrent uploads are counted one after another.
            usage = storage_quota.usage(
                session, workspace_id, ctx.settings.workspace_quota_bytes, lock=True
            )
            if size > usage.room_bytes:
                raise usage.refuse(size)
            # Under the same lock: concurrent uploads cannot all take the last place in line.
            analysis_queue.refuse_when_full(session, workspace_id, ctx.settings.max_queued_analyses)
            capture = Capture(
                id=capture_id,
                workspace_id=workspace_id,
                uploaded_by=viewer.user_id,
                filename=filename,
                sha256=sha256,
                size_bytes=size,
                format=container if container in ("pcap", "pcapng") else "unknown",
                compression=container if container in ("gzip", "zstd") else None,
                blob_key=blob_key,
                status="queued",
                progress_bytes=0,
                attempts=0,
            )
            session.add(capture)
            try:
                session.flush()
                capture.job_id = analysis_queue.enqueue(session, capture)
                session.commit()
                return Received(capture=capture, created=True, analysing=True)
            except IntegrityError:
                # The same bytes arrived concurrently and the other upload won the race.
                session.rollback()
                existing = _by_digest(session, workspace_id, sha256)
                if existing is None:
                    raise
        analysing = existing.status == "failed"
        if analysing:
            analysis_queue.refuse_when_full(
                session, workspace_id, ctx.settings.max_queued_analyses, lock=True
            )
            _analyse_again(ctx, session, existing, blob_key)
    ctx.store.delete_prefix(f"captures/{capture_id}")
    return Received(capture=existing, created=False, analysing=analysing)


def _analyse_again(ctx: ServiceContext, session: Session, capture: Capture, new_blob: str) -> None:
    """The same bytes again after a failed analysis: a new analysis of the same capture (its
    file, brought back from the new upload if it is gone)."""
    try:
        ctx.store.size(capture.blob_key)
    except BlobNotFoundError:
        with ctx.store.open_reader(new_blob) as reader:
            writer = ctx.store.open_writer(capture.blob_key)
            try:
                while block := reader.read(WRITE_BATCH):
                    writer.write(block)
            except BaseException:
                writer.abort()
                raise
            writer.commit()
    capture.status = "queued"
    capture.stage = None
    capture.progress_bytes = 0
    capture.error_code = capture.error_message = None
    capture.attempts = 0
    capture.started_at = capture.finished_at = None
    capture.timings = None
    session.flush()
    capture.job_id = analysis_queue.enqueue(session, capture)
    session.commit()


def _by_digest(session: Session, workspace_id: uuid.UUID, sha256: str) -> Capture | None:
    return session.scalar(
        select(Capture).where(Capture.workspace_id == workspace_id, Capture.sha256 == sha256)
    )


CaptureSort = Literal["created", "filename", "size", "status", "top_finding"]
# Status in the order a person scanning the list cares about: work in progress, then failures.
_STATUS_ORDER = case(
    {"running": 0, "queued": 1, "failed": 2, "done": 3}, value=Capture.status, else_=4
)
# The top finding (rank 1) by severity (the core's scale, diagnosis/finding.py), captures without
# one after those with.
_TOP_SEVERITY = (
    select(case({"high": 0, "medium": 1, "low": 2, "info": 3}, value=Finding.severity, else_=4))
    .where(Finding.capture_id == Capture.id, Finding.rank == 1)
    .scalar_subquery()
)
_SORT_KEYS: dict[str, ColumnElement[Any] | InstrumentedAttribute[Any]] = {
    "created": Capture.created_at,
    "filename": func.lower(Capture.filename),
    "size": Capture.size_bytes,
    "status": _STATUS_ORDER,
    "top_finding": func.coalesce(_TOP_SEVERITY, 5),
}


@dataclass(frozen=True)
class CapturePage:
    items: list[Capture]
    total: int


def _contains(text: str) -> str:
    """An ILIKE pattern matching ``text`` anywhere, its own % and _ taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def list_captures(
    session: Session,
    viewer: Viewer,
    workspace_id: uuid.UUID | None,
    *,
    sort: CaptureSort = "created",
    descending: bool = True,
    name: str | None = None,
    finding: str | None = None,
    limit: int,
    offset: int = 0,
) -> CapturePage:
    """One page of the workspace's captures and how many match.

    ``name`` matches part of the file name; ``finding`` a finding's code exactly or part of its
    title (any finding of the capture, not only the top one), both case-insensitively. Ties of the
    sort key are broken by upload time, newest first, then id, so pages never overlap.
    """
    target = workspace_id or viewer.default_workspace_id
    if target is None or not viewer.reads_workspace(target):
        raise accounts.WorkspaceNotFound("no such workspace")
    limit = max(1, min(limit, PAGE_SIZE_MAX))
    for field, text in (("q", name), ("finding", finding)):
        if text and "\x00" in text:  # PostgreSQL text cannot hold NUL
            raise InvalidInput("a search cannot contain a NUL character", field=field)
    where: list[ColumnElement[bool]] = [Capture.workspace_id == target]
    if name:
        where.append(Capture.filename.ilike(_contains(name), escape="\\"))
    if finding:
        where.append(
            exists().where(
                Finding.capture_id == Capture.id,
                or_(
                    func.lower(Finding.code) == finding.lower(),
                    Finding.body["title"].astext.ilike(_contains(finding), escape="\\"),
                ),
            )
        )
    key = _SORT_KEYS[sort]
    rows = list(
        session.scalars(
            select(Capture)
            .where(*where)
            .order_by(
                key.desc() if descending else key.asc(),
                Capture.created_at.desc(),
                Capture.id.desc(),
            )
            .limit(limit)
            .offset(offset)
        )
    )
    total = session.scalar(select(func.count()).select_from(Capture).where(*where)) or 0
    return CapturePage(items=rows, total=int(total))


def delete_captures(
    ctx: ServiceContext, session: Session, viewer: Viewer, capture_ids: list[uuid.UUID]
) -> None:
    """Remove the captures, their results (cascade) and their files, all or none: the workspace's
    owner or the uploader may delete; other members may not."""
    doomed = []
    for capture_id in dict.fromkeys(capture_ids):
        capture = visible_capture(session, viewer, capture_id)
        if viewer.shared_capture_id is not None or viewer.user_id is None:
            raise NotCaptureOwner("a share link is read-only")
        role = accounts.role_in(session, viewer.user_id, capture.workspace_id)
        if role != "owner" and capture.uploaded_by != viewer.user_id:
            raise NotCaptureOwner(
                f"only the workspace's owner or the uploader deletes a capture ({capture.filename})"
            )
        doomed.append(capture)
    for capture in doomed:
        session.delete(capture)
    session.commit()
    for capture in doomed:
        ctx.store.delete_prefix(f"captures/{capture.id}")
        ctx.series.forget(f"captures/{capture.id}/")


class CaptureFileGone(NotFound):
    code = "capture_file_gone"
