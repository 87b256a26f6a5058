"""Session-wide test fixtures: one fresh, migrated PostgreSQL database per test session.

By default an embedded server is started in a temporary directory and deleted afterwards. With
``TCPLENS_TEST_DATABASE_URL`` (a server where the user may create databases) a uniquely named database
is created there instead and dropped afterwards.

Tests that need a server of their own (to stop or kill it) take ``new_cluster_dir``: a copy of a
cluster initialised once per session, so they skip initdb.

API tests take ``client`` (a FastAPI ``TestClient`` on an app wired to that database) or build their
own with ``create_app(settings, engine)``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from tcplens.db import embedded, migrate
from tcplens.db.engine import make_engine, normalize_url
from tcplens.main import create_app
from tcplens.settings import Settings


@pytest.fixture(scope="session")
def pristine_cluster() -> Iterator[Path]:
    """A stopped, freshly initialised embedded PostgreSQL data directory, made once per session.

    initdb is the slow part of starting a new server (1 s idle, 5-10 s on a loaded machine); tests
    that need a server of their own copy this directory instead (``new_cluster_dir``).
    """
    # Directly under /tmp (world-traversable), not pytest's 0700 tmp_path: as root the server runs
    # as another user, which must reach its data directory.
    scratch = Path(tempfile.mkdtemp(prefix="tcplens-test-pg-"))
    template = scratch / "template"
    embedded.start(template).stop()
    yield template
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="session")
def new_cluster_dir(pristine_cluster: Path) -> Iterator[Callable[[], Path]]:
    """Returns a function that makes a new, never started copy of ``pristine_cluster`` and returns
    its path (``<scratch>/postgres``); ``embedded.start(path)`` starts it without initdb."""
    made: list[Path] = []

    def make() -> Path:
        scratch = Path(tempfile.mkdtemp(prefix="tcplens-test-pg-"))
        made.append(scratch)
        target = scratch / "postgres"
        # cp -a keeps owner and modes: as root the files belong to the server's own user.
        subprocess.run(["cp", "-a", str(pristine_cluster), str(target)], check=True)
        return target

    yield make
    for scratch in made:
        shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture(scope="session")
def database_url(new_cluster_dir: Callable[[], Path]) -> Iterator[str]:
    server_url = os.environ.get("TCPLENS_TEST_DATABASE_URL")
    if server_url:
        yield from _fresh_database_on(normalize_url(server_url))
        return
    server = embedded.start(new_cluster_dir(), delete_on_exit=True)
    try:
        yield server.url
    finally:
        server.stop()


def _fresh_database_on(server_url: str) -> Iterator[str]:
    name = f"tcplens_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(server_url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def engine(database_url: str) -> Iterator[Engine]:
    """An engine on the session's fresh database, migrated to the newest revision."""
    engine = make_engine(database_url)
    migrate.upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    # No in-process worker: tests that need one start it themselves.
    return Settings(data_dir=tmp_path / "data", spa_dir=tmp_path / "spa", in_process_worker=False)


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(settings, engine)) as client:
        yield client
