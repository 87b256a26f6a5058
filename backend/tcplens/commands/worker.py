"""``tcplens worker``: take analysis jobs from the queue until stopped (SIGINT/SIGTERM).

Any number of workers, on any machines sharing the database and the blob store. A worker killed
mid-job stops sending heartbeats; another worker puts its job back in the queue.
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
    from tcplens.services.worker import run_worker
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
        asyncio.run(run_worker(context, concurrency=concurrency, install_signal_handlers=True))
    finally:
        engine.dispose()
    return 0
