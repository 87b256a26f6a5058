"""Accounts (issue 31 item 5): the password policy of OWASP ASVS 5.0 (length, a check against
breached and common passwords, no composition rules), a password change that ends the other
sessions, signing out everywhere, and the idle timeout of browser sessions."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import PASSWORD, Actor, sign_up

BASE_URL = "https://testserver"
SESSION = "__Host-tcplens_session"


@pytest.fixture
def app_client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    limited = settings.model_copy(
        update={"login_attempts_per_minute": 1000.0, "login_attempts_per_account_per_hour": 1e6}
    )
    with TestClient(create_app(limited, engine), base_url=BASE_URL) as client:
        yield client


def _new(client: TestClient) -> TestClient:
    return TestClient(client.app, base_url=BASE_URL)


def _signup(
    client: TestClient, password: str, email: str | None = None
) -> tuple[int, dict[str, object]]:
    email = email or f"pw-{uuid.uuid4().hex[:10]}@example.com"
    answer = _new(client).post("/api/v1/auth/signup", json={"email": email, "password": password})
    return answer.status_code, answer.json()


def _login(client: TestClient, email: str, password: str) -> TestClient:
    browser = _new(client)
    answer = browser.post("/api/v1/auth/login", json={"email": email, "password": password})
    assert answer.status_code == 200, answer.text
    return browser


@pytest.mark.parametrize(
    "password",
    [
        "password1234",  # breached, common
        "qwertyuiop123",  # a keyboard walk
        "aaaaaaaaaaaaaaaaaaaa",  # a repeat
        "iloveyou2024",  # common words and a year
        "short pass",  # under 12 characters
    ],
)
def test_guessable_and_short_passwords_are_refused(app_client: TestClient, password: str) -> None:
    status, problem = _signup(app_client, password)
    assert status == 422 and problem["code"] == "weak_password", problem
    assert problem["field"] == "password"


def test_the_e_mail_address_is_no_password(app_client: TestClient) -> None:
    email = f"margaret.hamilton.{uuid.uuid4().hex[:4]}@example.com"
    answer = _new(app_client).post("/api/v1/auth/signup", json={"email": email, "password": email})
    assert answer.status_code == 422 and answer.json()["code"] == "weak_password"


@pytest.mark.parametrize(
    "password",
    [
        "correct horse battery staple",  # lower-case words only: no composition rules
        "zürich ümlaut wörter 42 ∆",  # any script
        "a long passphrase that goes on and on past the sixty-four characters mark, kept whole",
    ],
)
def test_long_unguessable_passwords_need_no_symbols(app_client: TestClient, password: str) -> None:
    email = f"pw-{uuid.uuid4().hex[:10]}@example.com"
    status, body = _signup(app_client, password, email)
    assert status == 202, body
    _login(app_client, email, password)  # the account exists, with that password


def test_a_password_change_ends_the_other_sessions(app_client: TestClient) -> None:
    actor: Actor = sign_up(_new(app_client))
    elsewhere = _login(app_client, actor.email, PASSWORD)
    assert elsewhere.get("/api/v1/auth/me").status_code == 200
    old_cookie = actor.client.cookies.get(SESSION)

    wrong = actor.client.post(
        "/api/v1/auth/password",
        json={"current_password": "not the password", "new_password": "a brand new passphrase"},
        headers=actor.headers(),
    )
    assert wrong.status_code == 403 and wrong.json()["code"] == "wrong_password"
    weak = actor.client.post(
        "/api/v1/auth/password",
        json={"current_password": PASSWORD, "new_password": "password1234"},
        headers=actor.headers(),
    )
    assert weak.status_code == 422 and weak.json()["code"] == "weak_password"
    assert elsewhere.get("/api/v1/auth/me").status_code == 200  # nothing changed yet

    changed = actor.client.post(
        "/api/v1/auth/password",
        json={"current_password": PASSWORD, "new_password": "a brand new passphrase"},
        headers=actor.headers(),
    )
    assert changed.status_code == 200, changed.text
    # this browser stays signed in, with a new session id and CSRF token
    assert actor.client.cookies.get(SESSION) != old_cookie
    assert actor.client.get("/api/v1/auth/me").status_code == 200
    csrf = {"X-CSRF-Token": changed.json()["csrf_token"]}
    assert (
        actor.client.post("/api/v1/workspaces", json={"name": "t"}, headers=csrf).status_code == 201
    )
    # the other browser and the old session id open nothing
    assert elsewhere.get("/api/v1/auth/me").status_code == 401
    replay = _new(app_client).get("/api/v1/auth/me", headers={"Cookie": f"{SESSION}={old_cookie}"})
    assert replay.status_code == 401
    # the old password no longer signs in, the new one does
    refused = _new(app_client).post(
        "/api/v1/auth/login", json={"email": actor.email, "password": PASSWORD}
    )
    assert refused.status_code == 401
    _login(app_client, actor.email, "a brand new passphrase")


def test_an_api_token_cannot_change_the_password_or_sign_out_everywhere(
    app_client: TestClient,
) -> None:
    actor = sign_up(_new(app_client))
    token = actor.client.post("/api/v1/tokens", json={}, headers=actor.headers()).json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    for url, body in (
        ("/api/v1/auth/password", {"current_password": PASSWORD, "new_password": "x" * 20}),
        ("/api/v1/auth/logout-everywhere", None),
    ):
        answer = _new(app_client).post(url, json=body, headers=bearer)
        assert answer.status_code == 403 and answer.json()["code"] == "session_required"
    assert actor.client.get("/api/v1/auth/me").status_code == 200


def test_sign_out_everywhere_ends_every_session(app_client: TestClient) -> None:
    actor = sign_up(_new(app_client))
    others = [_login(app_client, actor.email, PASSWORD) for _ in range(2)]
    token = actor.client.post("/api/v1/tokens", json={}, headers=actor.headers()).json()["token"]
    ended = actor.client.post("/api/v1/auth/logout-everywhere", headers=actor.headers())
    assert ended.status_code == 204
    for browser in [actor.client, *others]:
        assert browser.get("/api/v1/auth/me").status_code == 401
    # API tokens are not sessions: they stay until revoked on their own
    bearer = {"Authorization": f"Bearer {token}"}
    assert _new(app_client).get("/api/v1/auth/me", headers=bearer).status_code == 200


def test_a_session_idle_longer_than_the_timeout_ends(
    app_client: TestClient, engine: Engine
) -> None:
    actor = sign_up(_new(app_client))
    idle = app_client.app.state.settings.session_idle_timeout_s  # type: ignore[attr-defined]
    assert idle == 8 * 3600  # the default
    with engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE sessions SET last_seen_at = now() - make_interval(secs => :s) "
                "WHERE user_id = :u"
            ),
            {"s": idle - 60, "u": actor.user_id},
        )
    # within the timeout: still signed in, and the request counts as activity
    assert actor.client.get("/api/v1/auth/me").status_code == 200
    with engine.begin() as connection:
        seen = connection.execute(
            text(
                "SELECT now() - last_seen_at < interval '1 minute' FROM sessions WHERE user_id = :u"
            ),
            {"u": actor.user_id},
        ).scalar_one()
        assert seen
        connection.execute(
            text(
                "UPDATE sessions SET last_seen_at = now() - make_interval(secs => :s) "
                "WHERE user_id = :u"
            ),
            {"s": idle + 1, "u": actor.user_id},
        )
    assert actor.client.get("/api/v1/auth/me").status_code == 401
