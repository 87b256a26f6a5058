"""Two tenants on one real app (embedded PostgreSQL, the in-process worker analysing uploads), for
the robustness tests: ``home`` is the workspace the tests act in, ``foreign`` is another tenant
whose ids, file name and e-mail must never appear in an answer given to ``home`` or to anonymous
callers. Each has one capture analysed by the worker, an API token and share links."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.api.auth import CSRF_HEADER, HOST_PREFIX, SESSION_COOKIE
from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up
from tests.capture.shared_captures import LAB, require

BASE_URL = "https://testserver"
# The first analysis after a change compiles the numba kernels (minutes on a loaded machine).
ANALYSIS_WAIT_S = 600.0


@dataclass
class Tenant:
    actor: Actor
    token: str  # API token scoped to the tenant's workspace
    token_id: str
    capture_id: str
    filename: str
    share_token: str
    share_link_id: str
    flow_ids: list[int] = field(default_factory=list)

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def session(self) -> dict[str, str]:
        """A browser's credentials: the session cookie and the CSRF header."""
        name = HOST_PREFIX + SESSION_COOKIE  # the settings' default: Secure cookies
        cookie = self.actor.client.cookies.get(name)
        return {"Cookie": f"{name}={cookie}", CSRF_HEADER: self.actor.csrf}


@dataclass
class Tenants:
    app: FastAPI
    client: TestClient  # anonymous
    home: Tenant
    foreign: Tenant
    revoked_share_token: str  # of home's capture
    expired_share_token: str  # of home's capture

    def foreign_markers(self) -> list[str]:
        """Strings of the foreign tenant that no answer to anyone else may contain."""
        f = self.foreign
        return [
            f.capture_id,
            str(f.actor.workspace_id),
            str(f.actor.user_id),
            f.actor.email,
            f.filename,
            f.token_id,
            f.share_link_id,
            f.token,
            f.share_token,
        ]


def _tenant(client: TestClient, capture: bytes, filename: str) -> Tenant:
    actor = sign_up(TestClient(client.app, base_url=BASE_URL))
    issued = actor.client.post("/api/v1/tokens", json={"name": "fuzz"}, headers=actor.headers())
    assert issued.status_code == 201, issued.text
    uploaded = actor.client.post(
        f"/api/v1/captures?filename={filename}", content=capture, headers=actor.headers()
    )
    assert uploaded.status_code == 202, uploaded.text
    capture_id = uploaded.json()["capture"]["id"]
    shared = actor.client.post(
        f"/api/v1/captures/{capture_id}/shares", json={}, headers=actor.headers()
    )
    assert shared.status_code == 201, shared.text
    return Tenant(
        actor=actor,
        token=issued.json()["token"],
        token_id=issued.json()["id"],
        capture_id=capture_id,
        filename=filename,
        share_token=shared.json()["token"],
        share_link_id=shared.json()["id"],
    )


def _wait_analysed(tenant: Tenant) -> None:
    deadline = time.monotonic() + ANALYSIS_WAIT_S
    while True:
        body = tenant.actor.client.get(f"/api/v1/captures/{tenant.capture_id}").json()
        if body["status"] in ("done", "failed"):
            break
        assert time.monotonic() < deadline, f"analysis still {body['status']}"
        time.sleep(0.2)
    assert body["status"] == "done", body
    flows = tenant.actor.client.get(f"/api/v1/captures/{tenant.capture_id}/flows").json()
    tenant.flow_ids = [f["id"] for f in flows["items"]]
    assert tenant.flow_ids


@pytest.fixture(scope="module")
def tenants(tmp_path_factory: pytest.TempPathFactory, engine: Engine) -> Iterator[Tenants]:
    require(LAB)
    data = tmp_path_factory.mktemp("tenants")
    settings = Settings(
        data_dir=data / "data",
        spa_dir=data / "spa",
        in_process_worker=True,  # the real worker analyses the uploads
        login_attempts_per_minute=100_000.0,
        login_attempts_per_account_per_hour=1e9,
        uploads_per_minute=100_000.0,
        # the hostile-input tests upload faster than one worker analyses: the queue limit has a
        # test of its own (tests/jobs/test_fair_queue.py)
        max_queued_analyses=10_000,
        max_upload_bytes=4 * 1024 * 1024,
    )
    app = create_app(settings, engine)
    with TestClient(app, base_url=BASE_URL) as client:
        # A distinctive name: a leak of the foreign capture's file name is found by substring.
        suffix = uuid.uuid4().hex[:8]
        home = _tenant(client, (LAB / "nagle_delack.pcap").read_bytes(), f"home-{suffix}.pcap")
        foreign = _tenant(
            client, (LAB / "stop_and_wait_app.pcap").read_bytes(), f"foreign-{suffix}.pcap"
        )
        shares = f"/api/v1/captures/{home.capture_id}/shares"
        revoked = home.actor.client.post(shares, json={}, headers=home.actor.headers()).json()
        gone = home.actor.client.delete(f"{shares}/{revoked['id']}", headers=home.actor.headers())
        assert gone.status_code == 204
        expired = home.actor.client.post(
            shares, json={"expires_in_s": 3600}, headers=home.actor.headers()
        ).json()
        with engine.begin() as connection:
            connection.execute(
                text("UPDATE share_links SET expires_at = now() - interval '1 s' WHERE id = :id"),
                {"id": expired["id"]},
            )
        # a second capture at home, so its listing has a second page
        second = home.actor.client.post(
            "/api/v1/captures?filename=second.pcap",
            content=(LAB / "dns_delay_upload.pcap").read_bytes(),
            headers=home.actor.headers(),
        )
        assert second.status_code == 202, second.text
        page = home.actor.client.get("/api/v1/captures?limit=1").json()
        assert page["total"] == 2
        for tenant in (home, foreign):
            _wait_analysed(tenant)
        yield Tenants(
            app=app,
            client=client,
            home=home,
            foreign=foreign,
            revoked_share_token=revoked["token"],
            expired_share_token=expired["token"],
        )
