"""The storage quota of a workspace: the bytes of its captures' original files, against
``TCPLENS_WORKSPACE_QUOTA_BYTES``.

An upload is checked three times, so that nothing past the quota is stored: before a byte is
read (what is stored already, plus the declared Content-Length), while it streams (its bytes
against the room left), and when its row is written, under a lock on the workspace row, so two
uploads racing for the last room cannot both get it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tcplens.db.accounts import Workspace
from tcplens.db.captures import Capture
from tcplens.errors import TooLarge


class QuotaExceeded(TooLarge):
    code = "quota_exceeded"
    title = "Storage quota exceeded"


@dataclass(frozen=True)
class Usage:
    used_bytes: int
    quota_bytes: int
    captures: int

    @property
    def room_bytes(self) -> int:
        return max(0, self.quota_bytes - self.used_bytes)

    def refuse(self, adding: int | None = None) -> QuotaExceeded:
        adding_text = "" if adding is None else f" and this upload ({adding} bytes) does not fit"
        return QuotaExceeded(
            f"the workspace stores {self.used_bytes} of its {self.quota_bytes} bytes"
            f"{adding_text}; delete captures to make room",
            used_bytes=self.used_bytes,
            quota_bytes=self.quota_bytes,
        )


def usage(
    session: Session, workspace_id: uuid.UUID, quota_bytes: int, *, lock: bool = False
) -> Usage:
    """What the workspace stores; with ``lock``, holds its row until the transaction ends."""
    if lock:
        session.execute(select(Workspace.id).where(Workspace.id == workspace_id).with_for_update())
    used, count = session.execute(
        select(func.coalesce(func.sum(Capture.size_bytes), 0), func.count()).where(
            Capture.workspace_id == workspace_id
        )
    ).one()
    return Usage(used_bytes=int(used), quota_bytes=quota_bytes, captures=int(count))
