"""Share links: one capture, read-only, without login, until revoked or expired.

The token carries 192 random bits and only its SHA-256 is stored. The policy a team expects:

* a link expires: 7 days unless its maker chooses another time, or "never" explicitly;
* a link serves the analysis only, unless its maker lets it serve the original file too (the
  packets, payloads included);
* links belong to the workspace, not to who made them: any member sees and revokes a capture's
  links, the workspace's owners see all of its links in one list (``links_of_workspace``), and
  when a member is removed the links they made are revoked (``accounts.remove_member``);
* a revoked or expired link says so (410 ``share_revoked`` / ``share_expired``) until its row is
  deleted DEAD_LINK_RETENTION later; an unknown token is 404, like a missing capture.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement

from tcplens.db.accounts import User
from tcplens.db.captures import Capture, ShareLink
from tcplens.errors import Gone, InvalidInput, NotFound
from tcplens.services import accounts, credentials
from tcplens.services.access import ReadOnlyAccess, Viewer, visible_capture

MAX_EXPIRY = timedelta(days=3650)
# A link made without an expiry of its choosing (issue 30: no link lives forever by accident).
DEFAULT_EXPIRY = timedelta(days=7)
# An expired or revoked link stays in its capture's list this long (its owner sees what became
# of it), then its row is deleted.
DEAD_LINK_RETENTION = timedelta(days=30)


class ShareLinkNotFound(NotFound):
    code = "share_link_not_found"


class ShareLinkRevoked(Gone):
    code = "share_revoked"


class ShareLinkExpired(Gone):
    code = "share_expired"


@dataclass(frozen=True)
class ShareLinkView:
    link: ShareLink
    created_by: str | None  # the maker's e-mail address (None: the account is gone)
    filename: str


@dataclass(frozen=True)
class IssuedShareLink:
    view: ShareLinkView
    token: str  # shown once


def create(
    session: Session,
    viewer: Viewer,
    capture_id: uuid.UUID,
    expires_in_s: int | None,
    *,
    allow_download: bool = False,
) -> IssuedShareLink:
    """A new link; ``expires_in_s`` None means never (the API's default is DEFAULT_EXPIRY)."""
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
        allow_download=allow_download,
    )
    session.add(link)
    session.commit()
    maker = session.get(User, viewer.user_id)
    view = ShareLinkView(link, maker.email if maker else None, capture.filename)
    return IssuedShareLink(view=view, token=token)


def _views(session: Session, *where: ColumnElement[bool]) -> list[ShareLinkView]:
    rows = session.execute(
        select(ShareLink, User.email, Capture.filename)
        .join(Capture, Capture.id == ShareLink.capture_id)
        .outerjoin(User, User.id == ShareLink.created_by)
        .where(*where)
        .order_by(ShareLink.created_at, ShareLink.id)
    ).all()
    return [ShareLinkView(link=r[0], created_by=r[1], filename=r[2]) for r in rows]


def links_of(session: Session, viewer: Viewer, capture_id: uuid.UUID) -> list[ShareLinkView]:
    capture = visible_capture(session, viewer, capture_id)
    if viewer.shared_capture_id is not None:
        raise ReadOnlyAccess("a share link cannot list share links")
    return _views(session, ShareLink.capture_id == capture.id)


def links_of_workspace(
    session: Session, viewer: Viewer, workspace_id: uuid.UUID
) -> list[ShareLinkView]:
    """Every link to the workspace's captures, for its owners to review."""
    if viewer.user_id is None or workspace_id not in viewer.workspace_ids:
        raise accounts.WorkspaceNotFound("no such workspace")
    if accounts.require_member(session, viewer.user_id, workspace_id) != "owner":
        raise accounts.NotWorkspaceOwner("only the workspace's owners review its share links")
    return _views(session, Capture.workspace_id == workspace_id)


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
    """The read-only viewer a share token stands for. Unknown → 404 (as a missing capture);
    revoked or expired → 410 with its own code, so the page can say what became of the link."""
    link = None
    if 16 <= len(token) <= 100:
        link = session.scalar(
            select(ShareLink).where(ShareLink.token_hash == credentials.token_digest(token))
        )
    if link is None or session.get(Capture, link.capture_id) is None:
        raise ShareLinkNotFound("no such capture")
    if link.revoked_at is not None:
        raise ShareLinkRevoked("this share link was revoked")
    if link.expires_at is not None and link.expires_at <= datetime.now(UTC):
        raise ShareLinkExpired("this share link has expired")
    return Viewer(
        via="share",
        user_id=None,
        workspace_ids=frozenset(),
        default_workspace_id=None,
        shared_capture_id=link.capture_id,
        scopes=frozenset({"captures:read"}),
        shared_file_allowed=link.allow_download,
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
