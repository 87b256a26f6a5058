"""The database session of the admin commands (``users``, ``tokens``): migrated first, like
``serve``, so an operator can create the first account before the first start."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy.orm import Session


@contextlib.contextmanager
def admin_session() -> Iterator[Session]:
    from tcplens.db import migrate
    from tcplens.db.engine import make_engine, make_sessionmaker, resolve_database
    from tcplens.settings import get_settings

    engine = make_engine(resolve_database(get_settings()).url)
    try:
        migrate.upgrade(engine)
        with make_sessionmaker(engine)() as session:
            yield session
    finally:
        engine.dispose()
