"""Sign-up, login, sessions with CSRF, workspaces and members, API tokens."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import PASSWORD, sign_up


@pytest.fixture
def app_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"login_attempts_per_minute": 1000.0})


@pytest.fixture
def make_client(app_settings: Settings, engine: Engine) -> Iterator[object]:
    app = create_app(app_settings, engine)
    clients: list[TestClient] = []

    def make() -> TestClient:
        client = TestClient(app, base_url="https://testserver")
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


def test_sign_in_after_sign_up_sets_a_secure_http_only_session_cookie(make_client) -> None:  # type: ignore[no-untyped-def]
    client = make_client()
    email = f"Alice-{uuid.uuid4().hex[:6]}@Example.com"
    created = client.post("/api/v1/auth/signup", json={"email": email, "password": PASSWORD})
    assert created.status_code == 202
    assert created.headers.get_list("set-cookie") == []
    response = client.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert response.status_code == 200
    cookies = response.headers.get_list("set-cookie")
    # the __Host- prefix: Secure, Path=/, no Domain (RFC 6265bis §4.1.3.2)
    session_cookie = next(c for c in cookies if c.startswith("__Host-tcplens_session="))
    assert "HttpOnly" in session_cookie and "Secure" in session_cookie
    assert "Path=/" in session_cookie and "domain" not in session_cookie.lower()
    assert any(c.startswith("__Host-tcplens_csrf=") for c in cookies)
    assert "samesite=lax" in session_cookie.lower()
    body = response.json()
    assert body["user"]["email"] == email.lower()
    assert body["workspaces"][0]["role"] == "owner"
    assert client.get("/api/v1/auth/me").json()["user"]["email"] == email.lower()


def test_sign_up_answers_the_same_for_a_taken_address_and_leaves_its_account_alone(  # type: ignore[no-untyped-def]
    make_client, engine: Engine
) -> None:
    actor = sign_up(make_client())
    other_password = "a different passphrase entirely 7"
    free = make_client().post(
        "/api/v1/auth/signup",
        json={"email": f"free-{uuid.uuid4().hex[:8]}@example.com", "password": other_password},
    )
    taken_client = make_client()
    taken = taken_client.post(
        "/api/v1/auth/signup", json={"email": actor.email.upper(), "password": other_password}
    )
    assert (
        (taken.status_code, taken.json())
        == (free.status_code, free.json())
        == (
            202,
            {"detail": free.json()["detail"]},
        )
    )
    for answer in (free, taken):
        assert answer.headers.get_list("set-cookie") == []
        assert answer.headers["content-type"] == "application/json"
    # No session for whoever asked, and the account is as it was: one user, its own password.
    assert taken_client.get("/api/v1/auth/me").status_code == 401
    with engine.connect() as connection:
        users = connection.execute(
            text("SELECT count(*) FROM users WHERE email = :e"), {"e": actor.email}
        ).scalar_one()
    assert users == 1
    login = make_client().post
    assert (
        login(
            "/api/v1/auth/login", json={"email": actor.email, "password": other_password}
        ).status_code
        == 401
    )
    assert (
        login("/api/v1/auth/login", json={"email": actor.email, "password": PASSWORD}).status_code
        == 200
    )


def test_a_weak_password_is_refused_at_sign_up(make_client) -> None:  # type: ignore[no-untyped-def]
    weak = make_client().post(
        "/api/v1/auth/signup", json={"email": "b@example.com", "password": "x"}
    )
    assert weak.status_code == 422 and weak.json()["code"] == "weak_password"


def test_login_failure_says_the_same_for_unknown_user_and_wrong_password(make_client) -> None:  # type: ignore[no-untyped-def]
    actor = sign_up(make_client())
    wrong = make_client().post(
        "/api/v1/auth/login", json={"email": actor.email, "password": "not the password"}
    )
    unknown = make_client().post(
        "/api/v1/auth/login", json={"email": "nobody@example.com", "password": PASSWORD}
    )
    assert wrong.status_code == unknown.status_code == 401
    assert wrong.json()["detail"] == unknown.json()["detail"]
    assert wrong.headers["content-type"] == "application/problem+json"
    ok = make_client().post("/api/v1/auth/login", json={"email": actor.email, "password": PASSWORD})
    assert ok.status_code == 200 and ok.json()["csrf_token"]


def test_unsafe_requests_with_the_cookie_need_the_csrf_header(make_client) -> None:  # type: ignore[no-untyped-def]
    actor = sign_up(make_client())
    missing = actor.client.post("/api/v1/workspaces", json={"name": "team"})
    assert missing.status_code == 403 and missing.json()["code"] == "csrf_failed"
    forged = actor.client.post(
        "/api/v1/workspaces", json={"name": "team"}, headers={"X-CSRF-Token": "0" * 64}
    )
    assert forged.status_code == 403
    ok = actor.client.post("/api/v1/workspaces", json={"name": "team"}, headers=actor.headers())
    assert ok.status_code == 201 and ok.json()["role"] == "owner"


def test_logout_ends_the_session(make_client) -> None:  # type: ignore[no-untyped-def]
    actor = sign_up(make_client())
    name = "__Host-tcplens_session"
    cookie = {"Cookie": f"{name}={actor.client.cookies.get(name)}"}
    replay = make_client()
    assert replay.get("/api/v1/auth/me", headers=cookie).status_code == 200
    assert actor.client.post("/api/v1/auth/logout", headers=actor.headers()).status_code == 204
    assert replay.get("/api/v1/auth/me", headers=cookie).status_code == 401


def test_invitations_say_nothing_about_who_has_an_account(make_client) -> None:  # type: ignore[no-untyped-def]
    owner, mate, third = (sign_up(make_client()) for _ in range(3))
    url = f"/api/v1/workspaces/{owner.workspace_id}/members"
    ghost_email = f"ghost-{uuid.uuid4().hex[:8]}@example.com"
    existing = owner.client.post(url, json={"email": mate.email}, headers=owner.headers())
    nobody = owner.client.post(url, json={"email": ghost_email}, headers=owner.headers())
    # the same answer for an address with an account and one without
    assert existing.status_code == nobody.status_code == 201
    assert existing.json() == {**nobody.json(), "email": mate.email}
    assert nobody.json() == {
        "user_id": None,
        "email": ghost_email,
        "role": "member",
        "status": "invited",
    }
    listed = {m["email"]: m["status"] for m in owner.client.get(url).json()}
    assert listed == {owner.email: "member", mate.email: "invited", ghost_email: "invited"}

    # the invitation takes effect with the invitee's next request, or at sign-up
    assert str(owner.workspace_id) in {
        w["id"] for w in mate.client.get("/api/v1/auth/me").json()["workspaces"]
    }
    ghost = sign_up(make_client(), ghost_email)
    assert str(owner.workspace_id) in {
        w["id"] for w in ghost.client.get("/api/v1/auth/me").json()["workspaces"]
    }
    listed = {m["email"]: m["status"] for m in owner.client.get(url).json()}
    assert listed == {owner.email: "member", mate.email: "member", ghost_email: "member"}

    by_member = mate.client.post(url, json={"email": third.email}, headers=mate.headers())
    assert by_member.status_code == 403 and by_member.json()["code"] == "not_workspace_owner"
    # an invitation not taken up yet can be cancelled, and is then never claimed
    later = f"later-{uuid.uuid4().hex[:8]}@example.com"
    assert owner.client.post(url, json={"email": later}, headers=owner.headers()).status_code == 201
    cancelled = owner.client.delete(
        f"/api/v1/workspaces/{owner.workspace_id}/invitations/{later}", headers=owner.headers()
    )
    assert cancelled.status_code == 204
    assert later not in {m["email"] for m in owner.client.get(url).json()}
    latecomer = sign_up(make_client(), later)
    assert [w["id"] for w in latecomer.client.get("/api/v1/auth/me").json()["workspaces"]] == [
        str(latecomer.workspace_id)
    ]
    # an address PostgreSQL cannot even hold is refused, not sent to the database
    nul = owner.client.delete(
        f"/api/v1/workspaces/{owner.workspace_id}/invitations/a%00b@example.com",
        headers=owner.headers(),
    )
    assert nul.status_code == 422 and nul.json()["code"] == "invalid_input"
    # someone outside the workspace sees no such workspace
    assert third.client.get(url).status_code == 404


def test_api_token_is_shown_once_works_as_bearer_and_can_be_revoked(make_client) -> None:  # type: ignore[no-untyped-def]
    actor = sign_up(make_client())
    issued = actor.client.post("/api/v1/tokens", json={"name": "ci"}, headers=actor.headers())
    assert issued.status_code == 201
    token = issued.json()["token"]
    assert token.startswith("tcpl_") and len(token) >= 40
    listed = actor.client.get("/api/v1/tokens").json()
    assert "token" not in listed[0] and listed[0]["display_prefix"] == token[:12]
    bearer = make_client()
    me = bearer.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert me.status_code == 200 and me.json()["user"]["email"] == actor.email
    assert me.json()["csrf_token"] is None
    revoked = actor.client.delete(f"/api/v1/tokens/{issued.json()['id']}", headers=actor.headers())
    assert revoked.status_code == 204
    again = bearer.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {token}"})
    assert again.status_code == 401 and again.headers["www-authenticate"] == "Bearer"


def test_login_is_rate_limited_with_retry_after(settings: Settings, engine: Engine) -> None:
    limited = settings.model_copy(update={"login_attempts_per_minute": 3.0})
    with TestClient(create_app(limited, engine), base_url="https://testserver") as client:
        codes = [
            client.post(
                "/api/v1/auth/login", json={"email": "x@example.com", "password": "wrong password"}
            ).status_code
            for _ in range(5)
        ]
        assert codes[:3] == [401, 401, 401]
        last = client.post(
            "/api/v1/auth/login", json={"email": "x@example.com", "password": "wrong password"}
        )
    assert last.status_code == 429 and int(last.headers["retry-after"]) >= 1
    assert last.json()["code"] == "rate_limited"
