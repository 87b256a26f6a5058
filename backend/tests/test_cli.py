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
    from tcplens.settings import get_settings

    monkeypatch.setenv("TCPLENS_DATABASE_URL", database_url)
    get_settings.cache_clear()
    try:
        assert main(["db", "upgrade"]) == 0
        assert "database at revision 0001" in capsys.readouterr().out
        assert main(["db", "where"]) == 0
        out = capsys.readouterr().out
    finally:
        get_settings.cache_clear()
    assert "revision:       0001" in out
    assert "postgresql+psycopg://postgres:***@" in out or "postgresql+psycopg://postgres@" in out
