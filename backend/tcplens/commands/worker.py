"""``tcplens worker``: take analysis jobs from the queue until stopped (SIGINT/SIGTERM/SIGHUP).

Any number of workers, on any machines sharing the database and the blob store. A worker killed
mid-job stops sending heartbeats; another worker puts its job back in the queue. A worker stopped
by a signal kills its running analyses at once and puts their jobs back in the queue (rather than
finishing them: ``docker stop`` sends SIGKILL ten seconds after SIGTERM).
"""

from __future__ import annotations

import argparse
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "worker",
        help="run an analysis worker",
        description="Run analysis jobs from the queue until interrupted. "
        "Uses the same TCPLENS_* settings (database, storage) as `tcplens serve`.",
    )
    parser.add_argument(
        "--concurrency", type=int, help="jobs at once (default: TCPLENS_WORKER_CONCURRENCY)"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import sys

    from alembic.script import ScriptDirectory

    from tcplens.db import migrate
    from tcplens.db.engine import make_engine, make_sessionmaker, resolve_database
    from tcplens.services.context import build_context
    from tcplens.settings import get_settings

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = get_settings()
    database = resolve_database(settings)
    engine = make_engine(database.url)
    head = ScriptDirectory.from_config(migrate.alembic_config(engine)).get_current_head()
    if migrate.current_revision(engine) != head:
        print(
            "tcplens worker: the database is not migrated; run `tcplens db upgrade`",
            file=sys.stderr,
        )
        return 1
    context = build_context(settings, engine, make_sessionmaker(engine))
    concurrency = args.concurrency or settings.worker_concurrency
    print(f"tcplens: worker on {database.description}, concurrency {concurrency}", flush=True)
    try:
        asyncio.run(_work_until_signalled(context, concurrency))
    finally:
        engine.dispose()
        database.release()
    return 0


async def _work_until_signalled(context: Any, concurrency: int) -> None:
    import asyncio
    import signal

    from tcplens.services.worker import in_process_worker

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    async with in_process_worker(context, concurrency) as worker:
        stopped = asyncio.create_task(stop.wait())
        await asyncio.wait({worker, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        failure = worker.exception() if worker.done() and not worker.cancelled() else None
        if failure is not None:
            raise failure  # the worker ended on its own: say why
