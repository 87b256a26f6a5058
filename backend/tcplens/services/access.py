"""Who is asking, and what they may read.

Every read of a capture goes through ``visible_capture``: a capture in a workspace the viewer does
not belong to is reported exactly like a missing one (404), so ids of other tenants leak nothing.
A share link's viewer sees one capture, read-only, and nothing else.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal, get_args

from sqlalchemy.orm import Session

from tcplens.db.captures import Capture
from tcplens.errors import NotFound, PermissionDenied
from tcplens.services.accounts import WorkspaceNotFound


class CaptureNotFound(NotFound):
    code = "capture_not_found"


class ReadOnlyAccess(PermissionDenied):
    code = "read_only"


class ShareDownloadNotAllowed(PermissionDenied):
    code = "share_download_not_allowed"


class InsufficientScope(PermissionDenied):
    code = "insufficient_scope"


# What an API token may do (RFC 6749 §3.3 calls these scopes). A browser session may do all of
# them; a share link only reads its one capture.
Scope = Literal["captures:read", "captures:write", "admin"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
# A new token's scopes unless asked otherwise: upload and read, but not create tokens or manage
# members, so revoking a leaked token cuts every access it gave (no token minted from it lives on).
DEFAULT_TOKEN_SCOPES: tuple[Scope, ...] = ("captures:read", "captures:write")


@dataclass(frozen=True)
class Viewer:
    via: Literal["session", "token", "share"]
    user_id: uuid.UUID | None
    # Workspaces whose captures this viewer reads (an API token: only its own workspace).
    workspace_ids: frozenset[uuid.UUID]
    # Where an upload goes when the request names no workspace.
    default_workspace_id: uuid.UUID | None
    # Set for a share-link viewer: the one capture it opens.
    shared_capture_id: uuid.UUID | None = None
    # What this viewer may do (a token: what it was issued with; a session: everything).
    scopes: frozenset[Scope] = frozenset(SCOPES)
    # A share-link viewer: whether the link lets it download the original file.
    shared_file_allowed: bool = False

    def requiring(self, scope: Scope) -> Viewer:
        """This viewer, if it holds ``scope``; else InsufficientScope (403)."""
        if scope not in self.scopes:
            raise InsufficientScope(f"this API token lacks the {scope!r} scope", scope=scope)
        return self

    def reads_workspace(self, workspace_id: uuid.UUID) -> bool:
        return self.shared_capture_id is None and workspace_id in self.workspace_ids


def visible_capture(session: Session, viewer: Viewer, capture_id: uuid.UUID) -> Capture:
    capture = session.get(Capture, capture_id)
    if capture is None:
        raise CaptureNotFound("no such capture")
    if viewer.shared_capture_id is not None:
        if capture.id != viewer.shared_capture_id:
            raise CaptureNotFound("no such capture")
    elif capture.workspace_id not in viewer.workspace_ids:
        raise CaptureNotFound("no such capture")
    return capture


def may_download(viewer: Viewer) -> bool:
    """Whether the viewer may have the original file: members may; a share link only when its
    maker allowed it (otherwise it opens the analysis only)."""
    return viewer.shared_capture_id is None or viewer.shared_file_allowed


def downloadable_capture(session: Session, viewer: Viewer, capture_id: uuid.UUID) -> Capture:
    capture = visible_capture(session, viewer, capture_id)
    if not may_download(viewer):
        raise ShareDownloadNotAllowed(
            "this share link opens the analysis only: its owner did not let it serve the "
            "capture file"
        )
    return capture


def writable_workspace(viewer: Viewer, workspace_id: uuid.UUID | None) -> uuid.UUID:
    """The workspace an upload goes to; one the viewer does not belong to is 'not found'."""
    if viewer.shared_capture_id is not None or viewer.user_id is None:
        raise ReadOnlyAccess("a share link is read-only")
    target = workspace_id or viewer.default_workspace_id
    if target is None or target not in viewer.workspace_ids:
        raise WorkspaceNotFound("no such workspace")
    return target
