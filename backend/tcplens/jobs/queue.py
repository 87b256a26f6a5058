"""The job queue: procrastinate on the same PostgreSQL database as everything else.

Why procrastinate: PostgreSQL is already required, so the queue adds no server; a job is enqueued
in the same transaction as the capture row (no capture without its job, no job without its
capture); workers take jobs with ``SELECT … FOR UPDATE SKIP LOCKED``, so two workers never run one
job; and workers send heartbeats, so the job of a worker that died (kill -9, lost machine) is found
and retried by ``services.tasks.retry_stalled_jobs``.
"""

from __future__ import annotations

import functools
from typing import Any

import procrastinate
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

from tcplens.db.engine import normalize_url

ANALYSIS_QUEUE = "analysis"
MAINTENANCE_QUEUE = "maintenance"
ANALYZE_TASK = "tcplens.analyze_capture"
RETRY_STALLED_TASK = "tcplens.retry_stalled_jobs"
PURGE_EXPIRED_TASK = "tcplens.purge_expired"


def conninfo(database_url: str) -> str:
    """A libpq connection string for psycopg from the SQLAlchemy URL the rest of the app uses."""
    url = make_url(normalize_url(database_url)).set(drivername="postgresql")
    return url.render_as_string(hide_password=False)


@functools.cache
def _deferring_app() -> procrastinate.App:
    # Deferring always goes through the caller's connection (see ``defer_analysis``), so this
    # connector never opens a pool of its own and needs no connection string. The tasks are
    # registered by the workers' app (``services.tasks``): deferring needs only their names.
    return procrastinate.App(connector=procrastinate.SyncPsycopgConnector())


def defer_analysis(session: Session, capture_id: str, *, priority: int) -> int:
    """Enqueue the analysis of a capture inside the session's current transaction.

    The job becomes visible to workers when the caller commits; on rollback it never existed.
    ``queueing_lock`` keeps at most one waiting job per capture. Workers take the job of highest
    ``priority`` first (``services.analysis_queue`` makes that fair between workspaces).
    """
    raw: Any = session.connection().connection.driver_connection
    app = _deferring_app()
    return app.configure_task(
        ANALYZE_TASK,
        queue=ANALYSIS_QUEUE,
        queueing_lock=f"capture:{capture_id}",
        priority=priority,
        connection=raw,
    ).defer(capture_id=capture_id)
