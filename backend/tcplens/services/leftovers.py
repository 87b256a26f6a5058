"""What killed processes and lost databases leave in the blob store, removed when the service
starts: files still being written (``.partial-*``, unfinished S3 multipart uploads) and capture
folders with no capture row (an upload whose row was never written).

Only what is older than ``LEFTOVER_GRACE_S`` goes: another API process sharing the store may be
receiving an upload right now (its partial file is written to every second or so), or be about
to write the row of one it just stored.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass

from sqlalchemy import select

from tcplens.db.captures import Capture
from tcplens.services.context import ServiceContext

logger = logging.getLogger(__name__)

LEFTOVER_GRACE_S = 3600.0
CAPTURES_PREFIX = "captures"


@dataclass(frozen=True)
class Swept:
    partial_writes: int
    orphan_captures: int


def sweep_leftovers(ctx: ServiceContext, *, now: float | None = None) -> Swept:
    cutoff = (time.time() if now is None else now) - LEFTOVER_GRACE_S
    partials = ctx.store.remove_partial_writes(cutoff)
    candidates: dict[uuid.UUID, str] = {}
    for name, newest in ctx.store.top_level(CAPTURES_PREFIX).items():
        try:
            capture_id = uuid.UUID(name)
        except ValueError:
            continue  # not a folder the service made: not ours to delete
        if newest < cutoff and str(capture_id) == name:
            candidates[capture_id] = name
    orphans = 0
    if candidates:
        with ctx.sessionmaker() as session:
            known = set(session.scalars(select(Capture.id).where(Capture.id.in_(candidates))))
        for capture_id, name in candidates.items():
            if capture_id not in known:
                ctx.store.delete_prefix(f"{CAPTURES_PREFIX}/{name}")
                orphans += 1
    if partials or orphans:
        logger.warning(
            "removed %d unfinished uploads and %d capture files with no capture", partials, orphans
        )
    return Swept(partial_writes=partials, orphan_captures=orphans)
