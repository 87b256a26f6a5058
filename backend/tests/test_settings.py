from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tcplens.settings import Settings


def test_environment_variables_with_prefix_configure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCPLENS_PORT", "9123")
    monkeypatch.setenv("TCPLENS_HOST", "::1")
    monkeypatch.setenv("TCPLENS_DATA_DIR", "/srv/tcplens")
    settings = Settings()
    assert (settings.host, settings.port) == ("::1", 9123)
    assert settings.embedded_postgres_dir == Path("/srv/tcplens/postgres")


def test_defaults_listen_on_loopback_and_keep_data_beside_the_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings()
    assert (settings.host, settings.port) == ("127.0.0.1", 8000)
    assert settings.data_path == tmp_path / ".tcplens-data"
    assert settings.database_url is None


@pytest.mark.parametrize("secret", ["changethis", "secret", "too-short-but-not-a-placeholder"])
def test_production_refuses_placeholder_or_short_secret(secret: str) -> None:
    with pytest.raises(ValidationError, match="TCPLENS_SECRET_KEY"):
        Settings(environment="production", secret_key=secret)


def test_production_accepts_a_real_secret() -> None:
    secret = "q" * 16 + "Zx9-" * 5
    settings = Settings(
        environment="production", secret_key=secret, public_url="https://tcplens.example.net"
    )
    assert settings.secret_key.get_secret_value() == secret


def test_production_refuses_to_build_links_from_the_request_host() -> None:
    """Share URLs must not come from a Host header any client sets: production needs the public
    URL or the list of host names the service answers to."""
    secret = "q" * 16 + "Zx9-" * 5
    with pytest.raises(ValidationError, match=r"TCPLENS_PUBLIC_URL .* or TCPLENS_ALLOWED_HOSTS"):
        Settings(environment="production", secret_key=secret)
    allowed = Settings(
        environment="production", secret_key=secret, allowed_hosts=" tcplens.example.net, *.lan "
    )
    assert allowed.allowed_host_list == ["tcplens.example.net", "*.lan"]
