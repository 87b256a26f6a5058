"""Rate limits behind (and without) a proxy, against a real ``tcplens serve`` (issue 31 item 4):
X-Forwarded-For counts only from TCPLENS_TRUSTED_PROXIES, and logins are limited per account
too, so 13 wrong passwords from 13 claimed addresses, then the right one, do not sign in."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.api.service_fixtures import PASSWORD
from tests.serving import running_server


def _post(url: str, body: dict[str, str], forwarded_for: str) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "X-Forwarded-For": forwarded_for},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


@pytest.fixture
def env(engine: Engine, database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TCPLENS_DATABASE_URL": database_url,
        "TCPLENS_DATA_DIR": str(tmp_path / "data"),
        "TCPLENS_SPA_DIR": str(tmp_path / "spa"),
        "TCPLENS_IN_PROCESS_WORKER": "false",
    }


@pytest.fixture
def direct(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """No trusted proxy (the default); 4 sign-in attempts a minute per client, so the limit is
    met long before the bucket refills (one every 15 s)."""
    limited = {**env, "TCPLENS_LOGIN_ATTEMPTS_PER_MINUTE": "4"}
    with running_server(limited, tmp_path / "direct.log") as url:
        yield url


@pytest.fixture
def proxied(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """Behind a proxy on loopback that the server trusts; the per-client limit is high, so
    only the per-account limit can stop a guesser who rotates addresses."""
    trusting = {
        **env,
        "TCPLENS_TRUSTED_PROXIES": "127.0.0.1/32, ::1",
        "TCPLENS_LOGIN_ATTEMPTS_PER_MINUTE": "1000",
    }
    with running_server(trusting, tmp_path / "proxied.log") as url:
        yield url


def test_forwarded_for_from_an_untrusted_peer_does_not_make_a_new_client(direct: str) -> None:
    email = f"victim-{uuid.uuid4().hex[:8]}@example.com"
    status, _ = _post(
        f"{direct}/api/v1/auth/signup", {"email": email, "password": PASSWORD}, "198.51.100.1"
    )
    assert status == 202
    answers = [
        _post(
            f"{direct}/api/v1/auth/login",
            {"email": email, "password": f"wrong guess {n}"},
            f"203.0.113.{n}",
        )
        for n in range(13)
    ]
    # one client, whatever it claims: the signup spent one of its 4, three wrong guesses the rest
    assert [s for s, _ in answers] == [401] * 3 + [429] * 10
    # refused by the per-client limit (the per-account one allows 10 at once)
    assert all("for this account" not in str(p["detail"]) for _, p in answers[3:])
    status, problem = _post(
        f"{direct}/api/v1/auth/login", {"email": email, "password": PASSWORD}, "203.0.113.200"
    )
    assert status == 429 and problem["code"] == "rate_limited"
    # sign-ups from "new" addresses are the same client too
    status, problem = _post(
        f"{direct}/api/v1/auth/signup",
        {"email": f"new-{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD},
        "192.0.2.77",
    )
    assert status == 429 and problem["code"] == "rate_limited"


def test_logins_are_limited_per_account_whatever_the_address(proxied: str) -> None:
    email = f"victim-{uuid.uuid4().hex[:8]}@example.com"
    status, _ = _post(
        f"{proxied}/api/v1/auth/signup", {"email": email, "password": PASSWORD}, "198.51.100.1"
    )
    assert status == 202
    statuses = [
        _post(
            f"{proxied}/api/v1/auth/login",
            {"email": email, "password": f"wrong guess {n}"},
            f"203.0.113.{n}",
        )[0]
        for n in range(13)
    ]
    assert statuses[:10] == [401] * 10 and set(statuses[10:]) == {429}
    status, problem = _post(
        f"{proxied}/api/v1/auth/login", {"email": email, "password": PASSWORD}, "203.0.113.200"
    )
    assert status == 429 and problem["code"] == "rate_limited"
    # another account is not held back, and a trusted proxy's X-Forwarded-For names the client
    other = f"other-{uuid.uuid4().hex[:8]}@example.com"
    assert (
        _post(f"{proxied}/api/v1/auth/signup", {"email": other, "password": PASSWORD}, "192.0.2.9")[
            0
        ]
        == 202
    )
    status, _ = _post(
        f"{proxied}/api/v1/auth/login", {"email": other, "password": PASSWORD}, "192.0.2.9"
    )
    assert status == 200
