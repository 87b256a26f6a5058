"""The analysis queue, fair between workspaces: one workspace's backlog delays another
workspace's next analysis by at most the analysis already running.

Every analysis job gets a place in line, a *tag* (start-time fair queueing, Goyal, Vin & Cheng,
SIGCOMM 1996, with every analysis counted as one unit of work): a workspace's next analysis is
one place behind its own last waiting or running one; a workspace with nothing waiting or
running starts at the place of the earliest analysis waiting or running now (the one being
served), so it goes ahead of every backlog. Workers take jobs by procrastinate's priority,
highest first, then oldest (``procrastinate_fetch_job``), so the tag is stored as the job's
priority, negated. With workspaces A (a backlog of analyses at places 5, 6, 7, …, 5 running) and
B (uploading three): B's go to places 5, 6, 7 and the jobs run A5, B5, A6, B6, A7, B7: round
robin. No lock: a workspace alone may use every worker.

A workspace may also have at most ``TCPLENS_MAX_QUEUED_ANALYSES`` analyses waiting; an upload
past that answers 429 ``analysis_queue_full``.
"""

from __future__ import annotations

import uuid

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from tcplens.db.accounts import Workspace
from tcplens.db.captures import Capture
from tcplens.errors import TooManyRequests
from tcplens.jobs.queue import ANALYSIS_QUEUE, ANALYZE_TASK, defer_analysis

# What a client refused for a full queue is told to wait: about one analysis of a typical
# capture, after which one place has usually come free.
RETRY_AFTER_S = 30

# The analyses waiting or running now, each with its place and workspace. The jobs of other
# queues, and finished ones, do not take part.
_NEXT_PLACE = text(
    """
    WITH pending AS (
        SELECT -jobs.priority AS place, captures.workspace_id
        FROM procrastinate_jobs AS jobs
        JOIN captures ON captures.id = (jobs.args ->> 'capture_id')::uuid
        WHERE jobs.queue_name = :queue AND jobs.task_name = :task
          AND jobs.status IN ('todo', 'doing')
    )
    SELECT coalesce(
        (SELECT max(place) + 1 FROM pending WHERE workspace_id = :workspace_id),
        (SELECT min(place) FROM pending),
        0
    )
    """
)


class AnalysisQueueFull(TooManyRequests):
    code = "analysis_queue_full"
    title = "Too many analyses waiting"


def next_place(session: Session, workspace_id: uuid.UUID) -> int:
    """The place in line of the workspace's next analysis (see the module's docstring)."""
    place = session.scalar(
        _NEXT_PLACE,
        {"queue": ANALYSIS_QUEUE, "task": ANALYZE_TASK, "workspace_id": workspace_id},
    )
    return int(place or 0)


def enqueue(session: Session, capture: Capture) -> int:
    """Queue the analysis of ``capture`` (flushed, in the session's transaction) at its
    workspace's place in line; the job's id."""
    place = next_place(session, capture.workspace_id)
    return defer_analysis(session, str(capture.id), priority=-place)


def queued(session: Session, workspace_id: uuid.UUID) -> int:
    """How many of the workspace's analyses wait for a worker."""
    return int(
        session.scalar(
            select(func.count()).where(
                Capture.workspace_id == workspace_id, Capture.status == "queued"
            )
        )
        or 0
    )


def refuse_when_full(
    session: Session, workspace_id: uuid.UUID, limit: int, *, lock: bool = False
) -> None:
    """Raise ``AnalysisQueueFull`` when the workspace already has ``limit`` analyses waiting;
    with ``lock``, hold the workspace's row until the transaction ends (so that concurrent
    uploads are counted one after another)."""
    if lock:
        session.execute(select(Workspace.id).where(Workspace.id == workspace_id).with_for_update())
    waiting = queued(session, workspace_id)
    if waiting >= limit:
        raise AnalysisQueueFull(
            f"the workspace already has {waiting} analyses waiting (at most {limit}); "
            f"try again when one has started",
            retry_after_s=RETRY_AFTER_S,
            queued=waiting,
            limit=limit,
        )
