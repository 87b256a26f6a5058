"""Running workers: in the API process (``tcplens serve``) or standalone (``tcplens worker``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading

from tcplens.jobs.queue import ANALYSIS_QUEUE, MAINTENANCE_QUEUE
from tcplens.services import tasks
from tcplens.services.context import ServiceContext

logger = logging.getLogger(__name__)


async def run_worker(
    context: ServiceContext, *, concurrency: int, install_signal_handlers: bool
) -> None:
    """Take jobs until cancelled (or, standalone, until SIGINT/SIGTERM)."""
    tasks.bind(context)
    from tcplens.services.analysis import start_fork_server, sweep_scratch

    sweep_scratch(context)
    # In the background: the worker takes jobs meanwhile (a first job waits for the server).
    threading.Thread(target=start_fork_server, name="tcplens-fork-server", daemon=True).start()
    url = context.engine.url.render_as_string(hide_password=False)
    app = tasks.worker_app(url)
    settings = context.settings
    async with app.open_async():
        await app.run_worker_async(
            queues=[ANALYSIS_QUEUE, MAINTENANCE_QUEUE],
            concurrency=concurrency,
            update_heartbeat_interval=settings.worker_heartbeat_s,
            stalled_worker_timeout=settings.stalled_worker_timeout_s,
            install_signal_handlers=install_signal_handlers,
            # Sleep at most this long between polls when LISTEN/NOTIFY is quiet.
            fetch_job_polling_interval=2.0,
        )


@contextlib.asynccontextmanager
async def in_process_worker(context: ServiceContext, concurrency: int | None = None):  # type: ignore[no-untyped-def]
    """A worker running until the block ends (alongside the API for the lifetime of the app, or
    as ``tcplens worker`` until a signal): then its running analyses are killed, their jobs go
    back to the queue, and it stops."""
    task = asyncio.create_task(
        run_worker(
            context,
            concurrency=concurrency or context.settings.worker_concurrency,
            install_signal_handlers=False,
        ),
        name="tcplens-in-process-worker",
    )
    from tcplens.services.analysis import analyses_stopped

    try:
        yield task
    finally:
        # procrastinate waits for running jobs when cancelled: stop their analyses first, or
        # the shutdown would wait for them (up to the analysis time limit).
        with analyses_stopped():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
