"""All configuration of the tcplens service, read once from the environment (prefix ``TCPLENS_``).

The analysis core (capture, tcp, diagnosis) never reads settings: it is given what it needs.

Data directory: ``./.tcplens-data`` relative to the working directory unless ``TCPLENS_DATA_DIR`` says
otherwise. We keep it beside the checkout on purpose: when tcplens runs as root, the embedded
PostgreSQL server runs as an unprivileged system user, and the package makes every parent of its data
directory traversable (``o+rx``) for that user. The checkout's parents already have to be traversable
for the same user to execute the server binaries in ``.venv``, so a data directory inside the checkout
widens nothing, where ``~/.local/share`` would open ``/root``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# Secrets that ship in examples and compose files; a production deployment must not run with them.
PLACEHOLDER_SECRETS = frozenset({"", "changethis", "change-me", "changeme", "secret", "tcplens"})


class Settings(BaseSettings):
    """The one settings class. Every field can be set as ``TCPLENS_<FIELD>`` in the environment."""

    model_config = SettingsConfigDict(env_prefix="TCPLENS_", extra="ignore")

    environment: Literal["development", "production"] = "development"
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    data_dir: Path = Path(".tcplens-data")
    # Unset: an embedded PostgreSQL server is started under data_dir/postgres.
    database_url: str | None = None
    # Signs session cookies and share links (the service adds them); required in production.
    secret_key: SecretStr = SecretStr("changethis")
    # Built SPA served at "/"; unset means frontend/dist of the checkout when it exists.
    spa_dir: Path | None = None

    @model_validator(mode="after")
    def _refuse_placeholder_secret_in_production(self) -> Settings:
        secret = self.secret_key.get_secret_value()
        if self.environment == "production" and (
            secret.lower() in PLACEHOLDER_SECRETS or len(secret) < 32
        ):
            raise ValueError(
                "TCPLENS_SECRET_KEY must be set to a random value of at least 32 characters "
                "in production (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(48))'`)"
            )
        return self

    @property
    def data_path(self) -> Path:
        """The data directory as an absolute path (it is created on first use, not here)."""
        return self.data_dir.expanduser().resolve()

    @property
    def embedded_postgres_dir(self) -> Path:
        return self.data_path / "postgres"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read from the environment on first use."""
    return Settings()
