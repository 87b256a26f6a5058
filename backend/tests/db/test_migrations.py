from __future__ import annotations

import uuid

from alembic.script import ScriptDirectory
from sqlalchemy import Engine, text

from tcplens.db import migrate


def test_database_is_at_the_newest_revision(engine: Engine) -> None:
    head = ScriptDirectory.from_config(migrate.alembic_config(engine)).get_current_head()
    assert head is not None
    assert migrate.current_revision(engine) == head


def test_first_migration_names_the_installation(engine: Engine) -> None:
    with engine.connect() as connection:
        value = connection.execute(
            text("SELECT value FROM app_meta WHERE key = 'instance_id'")
        ).scalar_one()
    assert uuid.UUID(value).version == 4


def test_upgrade_twice_changes_nothing(engine: Engine) -> None:
    before = migrate.current_revision(engine)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == before
