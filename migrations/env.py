"""Alembic environment: migrates the engine handed over by ``tcplens.db.migrate``, or, when run as
``alembic`` from the command line (e.g. ``alembic revision --autogenerate -m "..."``), the database
the settings point at (starting the embedded server if none is configured)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

import tcplens.db.models  # noqa: F401  (registers every table on the metadata)
from tcplens.db.base import Base
from tcplens.db.engine import make_engine, resolve_database
from tcplens.settings import get_settings


def _engine() -> Engine:
    engine = context.config.attributes.get("engine")
    if engine is None:
        engine = make_engine(resolve_database(get_settings()).url)
    return engine


def run_migrations() -> None:
    with _engine().connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()


if context.is_offline_mode():
    raise SystemExit("tcplens migrations run online only (they need the database)")
run_migrations()
