"""API token scopes (issue 31, item 2): a token made with the defaults cannot mint tokens or
manage members, so revoking a leaked token cuts all it gave; a token sees and revokes only its
own workspace's tokens; a read-only token cannot upload; ``last_used_at`` is kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up, tiny_pcap

BASE_URL = "https://testserver"


@pytest.fixture
def app_client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    limited = settings.model_copy(
        update={"login_attempts_per_minute": 1000.0, "uploads_per_minute": 1000.0}
    )
    with TestClient(create_app(limited, engine), base_url=BASE_URL) as client:
        yield client


def _actor(client: TestClient) -> Actor:
    return sign_up(TestClient(client.app, base_url=BASE_URL))


def _issue(actor: Actor, **body: object) -> dict[str, object]:
    issued = actor.client.post(
        "/api/v1/tokens", json={"name": "t", **body}, headers=actor.headers()
    )
    assert issued.status_code == 201, issued.text
    answer: dict[str, object] = issued.json()
    return answer


def _bearer(token: object) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_default_token_cannot_mint_tokens_or_manage_members(app_client: TestClient) -> None:
    owner, mate = _actor(app_client), _actor(app_client)
    issued = _issue(owner)
    assert issued["scopes"] == ["captures:read", "captures:write"]
    leaked = _bearer(issued["token"])

    minted = app_client.post("/api/v1/tokens", json={"name": "child"}, headers=leaked)
    assert minted.status_code == 403 and minted.json()["code"] == "insufficient_scope"
    members = f"/api/v1/workspaces/{owner.workspace_id}/members"
    added = app_client.post(members, json={"email": mate.email}, headers=leaked)
    assert added.status_code == 403 and added.json()["code"] == "insufficient_scope"
    removed = app_client.delete(f"{members}/{owner.user_id}", headers=leaked)
    assert removed.status_code == 403 and removed.json()["code"] == "insufficient_scope"
    # nothing was made: the owner still has one token and is alone in the workspace
    assert len(owner.client.get("/api/v1/tokens").json()) == 1
    assert [m["email"] for m in owner.client.get(members).json()] == [owner.email]
    # the token still does what it is for
    upload = app_client.post(
        "/api/v1/captures?filename=a.pcap", content=tiny_pcap(b"scoped"), headers=leaked
    )
    assert upload.status_code == 202, upload.text
    assert app_client.get("/api/v1/captures", headers=leaked).status_code == 200


def test_an_admin_token_cannot_grant_more_than_it_has(app_client: TestClient) -> None:
    owner = _actor(app_client)
    admin = _bearer(_issue(owner, scopes=["admin"])["token"])
    wider = app_client.post(
        "/api/v1/tokens", json={"scopes": ["admin", "captures:write"]}, headers=admin
    )
    assert wider.status_code == 403 and wider.json()["code"] == "insufficient_scope"
    same = app_client.post("/api/v1/tokens", json={"scopes": ["admin"]}, headers=admin)
    assert same.status_code == 201 and same.json()["scopes"] == ["admin"]
    # an admin-only token reads no captures
    refused = app_client.get("/api/v1/captures", headers=admin)
    assert refused.status_code == 403 and refused.json()["code"] == "insufficient_scope"
    unknown = owner.client.post(
        "/api/v1/tokens", json={"scopes": ["root"]}, headers=owner.headers()
    )
    assert unknown.status_code == 422


def test_a_read_only_token_cannot_upload_delete_or_share(app_client: TestClient) -> None:
    owner = _actor(app_client)
    capture = owner.client.post(
        "/api/v1/captures?filename=r.pcap", content=tiny_pcap(b"read-only"), headers=owner.headers()
    ).json()["capture"]["id"]
    reader = _bearer(_issue(owner, scopes=["captures:read"])["token"])
    assert app_client.get(f"/api/v1/captures/{capture}", headers=reader).status_code == 200
    for method, url, kwargs in (
        ("POST", "/api/v1/captures?filename=x.pcap", {"content": tiny_pcap(b"no")}),
        ("DELETE", f"/api/v1/captures/{capture}", {}),
        ("POST", f"/api/v1/captures/{capture}/shares", {"json": {}}),
    ):
        answer = app_client.request(method, url, headers=reader, **kwargs)
        assert answer.status_code == 403, (method, url, answer.text)
        assert answer.json()["code"] == "insufficient_scope"
    assert owner.client.get(f"/api/v1/captures/{capture}").status_code == 200


def test_a_token_lists_and_revokes_only_its_own_workspace_tokens(app_client: TestClient) -> None:
    owner = _actor(app_client)
    second = owner.client.post(
        "/api/v1/workspaces", json={"name": "second"}, headers=owner.headers()
    ).json()["id"]
    home_admin = _issue(owner, scopes=["admin"])
    other = _issue(owner, workspace_id=second)
    bearer = _bearer(home_admin["token"])

    listed = app_client.get("/api/v1/tokens", headers=bearer)
    assert listed.status_code == 200
    assert {t["id"] for t in listed.json()} == {home_admin["id"]}
    assert {t["workspace_id"] for t in listed.json()} == {str(owner.workspace_id)}
    # the browser session sees both
    assert {t["id"] for t in owner.client.get("/api/v1/tokens").json()} == {
        home_admin["id"],
        other["id"],
    }
    gone = app_client.delete(f"/api/v1/tokens/{other['id']}", headers=bearer)
    assert gone.status_code == 404 and gone.json()["code"] == "token_not_found"
    still = app_client.get("/api/v1/auth/me", headers=_bearer(other["token"]))
    assert still.status_code == 200


def test_last_used_at_is_set_when_a_token_is_used(app_client: TestClient, engine: Engine) -> None:
    owner = _actor(app_client)
    issued = _issue(owner)
    listed = {t["id"]: t for t in owner.client.get("/api/v1/tokens").json()}
    assert listed[issued["id"]]["last_used_at"] is None
    assert app_client.get("/api/v1/captures", headers=_bearer(issued["token"])).status_code == 200
    first = {t["id"]: t for t in owner.client.get("/api/v1/tokens").json()}[issued["id"]]
    assert first["last_used_at"] is not None
    # throttled: a second use within the minute writes nothing
    assert app_client.get("/api/v1/captures", headers=_bearer(issued["token"])).status_code == 200
    again = {t["id"]: t for t in owner.client.get("/api/v1/tokens").json()}[issued["id"]]
    assert again["last_used_at"] == first["last_used_at"]
    # a use after the minute moves it
    with engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE api_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = :id"
            ),
            {"id": issued["id"]},
        )
    assert app_client.get("/api/v1/captures", headers=_bearer(issued["token"])).status_code == 200
    moved = {t["id"]: t for t in owner.client.get("/api/v1/tokens").json()}[issued["id"]]
    assert moved["last_used_at"] > first["last_used_at"]
