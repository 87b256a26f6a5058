"""Share links: one capture, read-only, without login, until revoked or expired.

The token carries 192 random bits and only its SHA-256 is stored; an expired, revoked or unknown
token answers exactly like a missing capture.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session

from tcplens.db.captures import Capture, ShareLink
from tcplens.errors import InvalidInput, NotFound
from tcplens.services import credentials
from tcplens.services.access import ReadOnlyAccess, Viewer, visible_capture

MAX_EXPIRY = timedelta(days=3650)
# An expired or revoked link stays in its capture's list this long (its owner sees what became
# of it), then its row is deleted.
DEAD_LINK_RETENTION = timedelta(days=30)


class ShareLinkNotFound(NotFound):
    code = "share_link_not_found"


@dataclass(frozen=True)
class IssuedShareLink:
    link: ShareLink
    token: str  # shown once


def create(
    session: Session, viewer: Viewer, capture_id: uuid.UUID, expires_in_s: int | None
) -> IssuedShareLink:
    capture = visible_capture(session, viewer, capture_id)
    if viewer.user_id is None or viewer.shared_capture_id is not None:
        raise ReadOnlyAccess("a share link cannot create share links")
    expires_at = None
    if expires_in_s is not None:
        if not 60 <= expires_in_s <= MAX_EXPIRY.total_seconds():
            raise InvalidInput(
                "expires_in_s must be between 60 s and 10 years", field="expires_in_s"
            )
        expires_at = datetime.now(UTC) + timedelta(seconds=expires_in_s)
    token = credentials.new_share_token()
    link = ShareLink(
        capture_id=capture.id,
        token_hash=credentials.token_digest(token),
        created_by=viewer.user_id,
        expires_at=expires_at,
    )
    session.add(link)
    session.commit()
    return IssuedShareLink(link=link, token=token)


def links_of(session: Session, viewer: Viewer, capture_id: uuid.UUID) -> list[ShareLink]:
    capture = visible_capture(session, viewer, capture_id)
    if viewer.shared_capture_id is not None:
        raise ReadOnlyAccess("a share link cannot list share links")
    return list(
        session.scalars(
            select(ShareLink)
            .where(ShareLink.capture_id == capture.id)
            .order_by(ShareLink.created_at)
        )
    )


def revoke(session: Session, viewer: Viewer, capture_id: uuid.UUID, link_id: uuid.UUID) -> None:
    capture = visible_capture(session, viewer, capture_id)
    if viewer.shared_capture_id is not None:
        raise ReadOnlyAccess("a share link cannot revoke share links")
    link = session.get(ShareLink, link_id)
    if link is None or link.capture_id != capture.id:
        raise ShareLinkNotFound("no such share link")
    if link.revoked_at is None:
        link.revoked_at = datetime.now(UTC)
        session.commit()


def viewer_of(session: Session, token: str) -> Viewer:
    """The read-only viewer a share token stands for; unknown, expired or revoked → 404."""
    link = None
    if 16 <= len(token) <= 100:
        link = session.scalar(
            select(ShareLink).where(ShareLink.token_hash == credentials.token_digest(token))
        )
    now = datetime.now(UTC)
    if (
        link is None
        or link.revoked_at is not None
        or (link.expires_at is not None and link.expires_at <= now)
        or session.get(Capture, link.capture_id) is None
    ):
        raise ShareLinkNotFound("no such capture")
    return Viewer(
        via="share",
        user_id=None,
        workspace_ids=frozenset(),
        default_workspace_id=None,
        shared_capture_id=link.capture_id,
    )


def purge_dead_links(session: Session) -> int:
    """Delete share links expired or revoked more than DEAD_LINK_RETENTION ago; the number
    deleted."""
    cutoff = datetime.now(UTC) - DEAD_LINK_RETENTION
    result = session.execute(
        delete(ShareLink).where(or_(ShareLink.expires_at < cutoff, ShareLink.revoked_at < cutoff))
    )
    session.commit()
    return int(result.rowcount)  # type: ignore[attr-defined]
