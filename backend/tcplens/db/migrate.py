"""Apply the Alembic migrations in ``migrations/`` (run by ``tcplens serve`` and by the tests)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine

import tcplens

_PACKAGE_DIR = Path(tcplens.__file__).resolve().parent


def migrations_dir() -> Path:
    """``migrations/`` of the source tree; tcplens runs from one (editable install, also in Docker)."""
    candidate = _PACKAGE_DIR.parent.parent / "migrations"
    if not (candidate / "env.py").is_file():
        raise FileNotFoundError(f"tcplens migrations not found in {candidate}")
    return candidate


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # env.py takes the engine from here, so the CLI, the app and the tests migrate the same database.
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    command.upgrade(alembic_config(engine), revision)


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()
