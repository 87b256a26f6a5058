"""Who is asking, and what they may read.

Every read of a capture goes through ``visible_capture``: a capture in a workspace the viewer does
not belong to is reported exactly like a missing one (404), so ids of other tenants leak nothing.
A share link's viewer sees one capture, read-only, and nothing else.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from tcplens.db.captures import Capture
from tcplens.errors import NotFound, PermissionDenied
from tcplens.services.accounts import WorkspaceNotFound


class CaptureNotFound(NotFound):
    code = "capture_not_found"


class ReadOnlyAccess(PermissionDenied):
    code = "read_only"


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


def writable_workspace(viewer: Viewer, workspace_id: uuid.UUID | None) -> uuid.UUID:
    """The workspace an upload goes to; one the viewer does not belong to is 'not found'."""
    if viewer.shared_capture_id is not None or viewer.user_id is None:
        raise ReadOnlyAccess("a share link is read-only")
    target = workspace_id or viewer.default_workspace_id
    if target is None or target not in viewer.workspace_ids:
        raise WorkspaceNotFound("no such workspace")
    return target
