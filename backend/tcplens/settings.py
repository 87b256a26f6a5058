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

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

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

    # --- service (issue 7) ---
    # Uploads larger than this answer 413 (checked on Content-Length and while streaming).
    max_upload_bytes: int = Field(default=2 * 1024**3, ge=1)
    # What one workspace may store (its captures' original files); an upload past it answers 413.
    workspace_quota_bytes: int = Field(default=20 * 1000**3, ge=1)
    # Analyses one workspace may have waiting for a worker; an upload past it answers 429.
    max_queued_analyses: int = Field(default=10, ge=1)
    # Unset: blobs live under data_dir/blobs. "s3://bucket/prefix" uses an S3-compatible store.
    storage_url: str | None = None
    s3_endpoint_url: str | None = None
    s3_region: str | None = None
    s3_access_key_id: str | None = None
    s3_secret_access_key: SecretStr | None = None
    # `tcplens serve` runs an analysis worker in the same process unless this is false.
    in_process_worker: bool = True
    worker_concurrency: int = Field(default=1, ge=1, le=64)
    # Bounds on one analysis: wall time, and the address space the child process that runs it
    # may add to what its loaded libraries already take (RLIMIT_AS, set at its start).
    analysis_timeout_s: float = Field(default=600.0, gt=0)
    analysis_memory_bytes: int = Field(default=8 * 1024**3, ge=64 * 1024**2)
    # A worker that sent no heartbeat for this long is presumed dead; its job runs again.
    stalled_worker_timeout_s: float = Field(default=30.0, gt=0)
    worker_heartbeat_s: float = Field(default=5.0, gt=0)
    # Browser sessions: an absolute lifetime, and an end after this long without a request.
    session_max_age_s: int = Field(default=14 * 24 * 3600, ge=60)
    session_idle_timeout_s: int = Field(default=8 * 3600, ge=60)
    cookie_secure: bool = True
    # Rate limits per client (in-process token buckets: per API process, not cluster-wide).
    login_attempts_per_minute: float = Field(default=10.0, gt=0)
    uploads_per_minute: float = Field(default=30.0, gt=0)
    # And per account, whichever client asks: LOGIN_BURST_PER_ACCOUNT at once, then this many an
    # hour (password guessing spread over many addresses).
    login_attempts_per_account_per_hour: float = Field(default=30.0, gt=0)
    # Reverse proxies (addresses or CIDR networks, comma-separated) whose X-Forwarded-For and
    # X-Forwarded-Proto are believed. Empty (the default): nobody's; the peer is the client.
    trusted_proxies: Annotated[list[str], NoDecode] = []
    # Base URL printed in share links when the request's own URL is not the public one.
    public_url: str | None = None
    # Host names (comma-separated; "*.example.net" for subdomains) this service answers to:
    # requests naming another Host are refused, so no link is built from a forged one. Unset: any.
    allowed_hosts: str | None = None

    @field_validator("trusted_proxies", mode="before")
    @classmethod
    def _split_proxies(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _proxies_are_networks(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError as error:
                raise ValueError(
                    f"TCPLENS_TRUSTED_PROXIES: {item!r} is not an address or CIDR network"
                ) from error
        return value

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

    @model_validator(mode="after")
    def _refuse_request_hosts_in_production(self) -> Settings:
        # Without either, share links would name whatever Host a request claimed (a link to an
        # attacker's site, sent by the owner's own hand).
        if self.environment == "production" and not (self.public_url or self.allowed_host_list):
            raise ValueError(
                "set TCPLENS_PUBLIC_URL (the URL users reach tcplens at) or TCPLENS_ALLOWED_HOSTS "
                "(the host names it answers to) in production"
            )
        return self

    @property
    def allowed_host_list(self) -> list[str]:
        return [h.strip() for h in (self.allowed_hosts or "").split(",") if h.strip()]

    @property
    def data_path(self) -> Path:
        """The data directory as an absolute path (it is created on first use, not here)."""
        return self.data_dir.expanduser().resolve()

    @property
    def embedded_postgres_dir(self) -> Path:
        return self.data_path / "postgres"

    @property
    def blob_dir(self) -> Path:
        return self.data_path / "blobs"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read from the environment on first use."""
    return Settings()
