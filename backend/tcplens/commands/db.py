"""``tcplens db``: administer the database (``upgrade``, ``where``)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser("db", help="administer the database")
    actions = parser.add_subparsers(title="actions", metavar="ACTION", required=True)
    upgrade = actions.add_parser("upgrade", help="apply all database migrations")
    upgrade.set_defaults(run=run_upgrade)
    where = actions.add_parser("where", help="print where the data and the database are")
    where.set_defaults(run=run_where)


def run_upgrade(args: argparse.Namespace) -> int:
    from tcplens.db import migrate
    from tcplens.db.engine import make_engine, resolve_database
    from tcplens.settings import get_settings

    database = resolve_database(get_settings())
    engine = make_engine(database.url)
    migrate.upgrade(engine)
    print(f"tcplens: database at revision {migrate.current_revision(engine)}")
    engine.dispose()
    database.release()
    return 0


def run_where(args: argparse.Namespace) -> int:
    from tcplens.db import migrate
    from tcplens.db.engine import make_engine, resolve_database
    from tcplens.settings import get_settings

    settings = get_settings()
    database = resolve_database(settings)
    engine = make_engine(database.url)
    print(f"data directory: {settings.data_path}")
    print(f"database:       {database.description}")
    print(f"revision:       {migrate.current_revision(engine) or 'none (run tcplens db upgrade)'}")
    engine.dispose()
    database.release()
    return 0
