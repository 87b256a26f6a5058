"""Captures and their analysis results, and the share links that open one capture read-only.

Flows and findings keep the core's JSON exactly as DESIGN.md specifies it (``summary`` / ``body``)
next to a few typed columns the API sorts and filters on.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from tcplens.db.accounts import created_at_column, new_id
from tcplens.db.base import Base

CAPTURE_STATUSES = ("queued", "running", "done", "failed")


class Capture(Base):
    __tablename__ = "captures"
    __table_args__ = (
        # Idempotent upload: the same bytes in the same workspace are the same capture.
        UniqueConstraint("workspace_id", "sha256", name="captures_workspace_sha256"),
        CheckConstraint("status IN ('queued', 'running', 'done', 'failed')", name="capture_status"),
        # Cursor pagination walks (created_at, id) newest first.
        Index("captures_workspace_listing", "workspace_id", "created_at", "id"),
    )

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    workspace_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    uploaded_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    filename: Mapped[str] = mapped_column(String(255))
    sha256: Mapped[str] = mapped_column(String(64))
    size_bytes: Mapped[int] = mapped_column(BigInteger)
    format: Mapped[str] = mapped_column(String(16))
    compression: Mapped[str | None] = mapped_column(String(16))
    blob_key: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16), default="queued")
    stage: Mapped[str | None] = mapped_column(String(32))
    progress_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    error_code: Mapped[str | None] = mapped_column(String(64))
    error_message: Mapped[str | None] = mapped_column(Text)
    facts: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # Seconds per step of the last analysis (queued, child start-up, reading, ..., storing).
    timings: Mapped[dict[str, float] | None] = mapped_column(JSONB)
    analyzer_version: Mapped[str | None] = mapped_column(String(64))
    job_id: Mapped[int | None] = mapped_column(BigInteger)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = created_at_column()
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class Flow(Base):
    __tablename__ = "flows"

    capture_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("captures.id", ondelete="CASCADE"), primary_key=True
    )
    flow_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    client: Mapped[str] = mapped_column(String(64))
    server: Mapped[str] = mapped_column(String(64))
    start_s: Mapped[float] = mapped_column(Float)
    duration_s: Mapped[float] = mapped_column(Float)
    bytes_total: Mapped[int] = mapped_column(BigInteger)
    packets: Mapped[int] = mapped_column(BigInteger)
    # Metric columns the flow table sorts on (indexed below per capture).
    throughput_bps: Mapped[float] = mapped_column(Float)
    retransmissions: Mapped[int] = mapped_column(Integer)
    time_lost_s: Mapped[float] = mapped_column(Float)
    limiting_factor: Mapped[str | None] = mapped_column(String(32))
    # The flow exactly as DESIGN.md's analyze JSON has it.
    summary: Mapped[dict[str, Any]] = mapped_column(JSONB)
    # Blob keys of the per-direction series files: {"client_to_server": key, ...}.
    series_keys: Mapped[dict[str, Any]] = mapped_column(JSONB)


class Finding(Base):
    __tablename__ = "findings"

    capture_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("captures.id", ondelete="CASCADE"), primary_key=True
    )
    # Position in the core's list: most important first.
    rank: Mapped[int] = mapped_column(Integer, primary_key=True)
    code: Mapped[str] = mapped_column(String(64))
    severity: Mapped[str] = mapped_column(String(16))
    factor: Mapped[str | None] = mapped_column(String(32))
    time_lost_s: Mapped[float | None] = mapped_column(Float)
    # The finding exactly as DESIGN.md's analyze JSON has it.
    body: Mapped[dict[str, Any]] = mapped_column(JSONB)


class ShareLink(Base):
    __tablename__ = "share_links"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=new_id)
    capture_id: Mapped[uuid.UUID] = mapped_column(
        ForeignKey("captures.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_by: Mapped[uuid.UUID | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = created_at_column()
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Whether the link also serves the original file (packets with their payloads), or only the
    # analysis. Links made before the choice existed served the file, and keep doing so.
    allow_download: Mapped[bool] = mapped_column(Boolean, server_default=false())
