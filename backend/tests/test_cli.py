from __future__ import annotations

import pytest

import tcplens
from tcplens.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"tcplens {tcplens.__version__}"


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: tcplens" in capsys.readouterr().err


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_db_where_and_upgrade_on_a_configured_server(
    database_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from alembic.script import ScriptDirectory

    from tcplens.db import migrate
    from tcplens.db.engine import make_engine
    from tcplens.settings import get_settings

    engine = make_engine(database_url)
    head = ScriptDirectory.from_config(migrate.alembic_config(engine)).get_current_head()
    engine.dispose()
    monkeypatch.setenv("TCPLENS_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        assert main(["db", "upgrade"]) == 0
        assert f"database at revision {head}" in capsys.readouterr().out
        assert main(["db", "where"]) == 0
        out = capsys.readouterr().out
    finally:
        get_settings.cache_clear()
    assert f"revision:       {head}" in out
    assert "postgresql+psycopg://postgres:***@" in out or "postgresql+psycopg://postgres@" in out
