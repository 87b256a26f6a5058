"""Which database to use, and the SQLAlchemy engine and sessions for it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine, create_engine
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from tcplens.db import embedded
from tcplens.settings import Settings


@dataclass(frozen=True)
class Database:
    """Where the database is: its URL, and a description for humans (never contains a password)."""

    url: str
    description: str
    embedded: embedded.EmbeddedServer | None = None

    def release(self) -> None:
        """Stop the embedded server if this process started it and no other process uses it.

        Call it when done: the package's own ``atexit`` fallback does not run in processes that end
        with ``os._exit`` (multiprocessing children such as ``uvicorn --reload`` workers).
        """
        if self.embedded is not None:
            self.embedded.stop()


def resolve_database(settings: Settings) -> Database:
    """The configured server, or the embedded one (started here if needed) when none is configured."""
    if settings.database_url:
        url = make_url(normalize_url(settings.database_url))
        return Database(url=url.render_as_string(hide_password=False), description=repr(url))
    server = embedded.start(settings.embedded_postgres_dir)
    return Database(
        url=server.url, description=f"embedded PostgreSQL in {server.data_dir}", embedded=server
    )


def normalize_url(url: str) -> str:
    """Accept the usual ``postgresql://`` and ``postgres://`` forms and use the psycopg 3 driver."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


# Connections kept open: a request holds one for its duration, and the API serves sync routes
# from a pool of 40 threads (anyio's default). With SQLAlchemy's default of 5 (+10 overflow,
# closed when returned) 50 concurrent clients made the server open a new PostgreSQL connection
# for most requests and wait for the pool on the others (a quarter of its time, profiled).
POOL_SIZE = 20
POOL_OVERFLOW = 30


def make_engine(url: str) -> Engine:
    # pool_pre_ping: the embedded server may have been restarted underneath a long-running process.
    return create_engine(
        normalize_url(url),
        pool_pre_ping=True,
        pool_size=POOL_SIZE,
        max_overflow=POOL_OVERFLOW,
    )


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)
