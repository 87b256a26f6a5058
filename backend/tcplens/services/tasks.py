"""The tasks workers run, and the process-wide context they run with.

``analyze_capture`` is synchronous (procrastinate runs it in a thread); the analysis itself runs
in a child process with bounded memory and time (``services.analysis``). ``retry_stalled_jobs``
runs every few seconds on every worker (procrastinate defers each periodic run once, whichever
worker gets there first) and puts the jobs of workers whose heartbeat stopped back in the queue;
``purge_expired`` deletes expired sessions and long-dead share links every ten minutes.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import procrastinate

from tcplens.jobs.queue import (
    ANALYSIS_QUEUE,
    ANALYZE_TASK,
    MAINTENANCE_QUEUE,
    PURGE_EXPIRED_TASK,
    RETRY_STALLED_TASK,
    conninfo,
)
from tcplens.services.context import ServiceContext

logger = logging.getLogger(__name__)

# Every 5 s. croniter's sixth field is the seconds: "*/5 * * * * *" would mean "every second of
# minutes 0, 5, 10, ..." and leave a dead worker's job stalled for up to five minutes.
STALLED_CHECK_CRON = "* * * * * */5"
# Expired sessions and long-dead share links: every ten minutes (five fields: minutes).
PURGE_EXPIRED_CRON = "*/10 * * * *"

_context: ServiceContext | None = None


def bind(context: ServiceContext) -> None:
    """Give this process's tasks their database, store and settings (once, at worker start)."""
    global _context
    _context = context


def current_context() -> ServiceContext:
    if _context is None:
        raise RuntimeError("tcplens tasks run only in a worker started by tcplens")
    return _context


def analyze_capture(capture_id: str) -> None:
    from tcplens.services import analysis

    analysis.analyze(current_context(), uuid.UUID(capture_id))


async def retry_stalled_jobs(context: procrastinate.JobContext, timestamp: int) -> None:
    from tcplens.services import analysis

    service = current_context()
    manager = context.app.job_manager
    for job in await manager.get_stalled_jobs(
        seconds_since_heartbeat=service.settings.stalled_worker_timeout_s
    ):
        logger.warning("job %s of a stalled worker goes back in the queue", job.id)
        await manager.retry_job(job)
    await asyncio.to_thread(analysis.fail_captures_of_dead_jobs, service)
    # This task itself runs every few seconds: forget its own finished runs after an hour so
    # the queue table does not grow without bound (analysis jobs are kept: captures name them).
    await manager.delete_old_jobs(nb_hours=1, queue=MAINTENANCE_QUEUE, include_failed=True)


def purge_expired(timestamp: int) -> None:
    """Delete rows that no longer open anything: expired browser sessions, and share links
    expired or revoked long ago (services.sharing.DEAD_LINK_RETENTION)."""
    from tcplens.services import accounts, sharing

    context = current_context()
    with context.sessionmaker() as session:
        sessions = accounts.purge_expired_sessions(session, context.settings.session_idle_timeout_s)
        links = sharing.purge_dead_links(session)
    if sessions or links:
        logger.info("purged %d expired sessions and %d dead share links", sessions, links)


def worker_app(database_url: str) -> procrastinate.App:
    """An app with tcplens's tasks registered on it, whose connector opens its own async pool:
    what a worker runs on."""
    app = procrastinate.App(
        connector=procrastinate.PsycopgConnector(conninfo=conninfo(database_url))
    )
    register(app)
    return app


def register(app: procrastinate.App) -> None:
    # Retried for failures outside the analysis itself (e.g. the database restarting); the
    # analysis's own failures are recorded on the capture and end the job normally.
    app.task(
        name=ANALYZE_TASK,
        queue=ANALYSIS_QUEUE,
        retry=procrastinate.RetryStrategy(max_attempts=3, wait=5),
    )(analyze_capture)
    stalled = app.task(
        name=RETRY_STALLED_TASK,
        queue=MAINTENANCE_QUEUE,
        pass_context=True,
        queueing_lock=RETRY_STALLED_TASK,
    )(retry_stalled_jobs)
    app.periodic(cron=STALLED_CHECK_CRON, periodic_id="retry-stalled")(stalled)
    purge = app.task(
        name=PURGE_EXPIRED_TASK, queue=MAINTENANCE_QUEUE, queueing_lock=PURGE_EXPIRED_TASK
    )(purge_expired)
    app.periodic(cron=PURGE_EXPIRED_CRON, periodic_id="purge-expired")(purge)
