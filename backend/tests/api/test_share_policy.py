"""The share-link policy (issue 30 item 2, issue 31 item 3): links expire after 7 days unless
asked otherwise ("never" only explicitly); a link serves the analysis only unless its maker lets
it serve the file; revoked and expired links say so; links belong to the workspace: its owners
review them all, and a removed member's links are revoked with them."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up, tiny_pcap

BASE_URL = "https://testserver"
PROBLEM_JSON = "application/problem+json"


@pytest.fixture
def app_client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    limited = settings.model_copy(
        update={"login_attempts_per_minute": 1000.0, "uploads_per_minute": 1000.0}
    )
    with TestClient(create_app(limited, engine), base_url=BASE_URL) as client:
        yield client


def _actor(client: TestClient) -> Actor:
    return sign_up(TestClient(client.app, base_url=BASE_URL))


def _upload(actor: Actor, payload: bytes, workspace_id: uuid.UUID | None = None) -> str:
    where = f"&workspace_id={workspace_id}" if workspace_id else ""
    answer = actor.client.post(
        f"/api/v1/captures?filename=team.pcap{where}", content=payload, headers=actor.headers()
    )
    assert answer.status_code == 202, answer.text
    capture_id: str = answer.json()["capture"]["id"]
    return capture_id


def _share(actor: Actor, capture_id: str, **body: object) -> dict[str, object]:
    answer = actor.client.post(
        f"/api/v1/captures/{capture_id}/shares", json=body, headers=actor.headers()
    )
    assert answer.status_code == 201, answer.text
    link: dict[str, object] = answer.json()
    return link


def _problem(response: object, status: int, code: str) -> None:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == PROBLEM_JSON  # type: ignore[attr-defined]
    assert response.json()["code"] == code  # type: ignore[attr-defined]


def test_a_link_made_without_an_expiry_expires_in_7_days(app_client: TestClient) -> None:
    owner = _actor(app_client)
    capture = _upload(owner, tiny_pcap(b"expiry"))
    before = datetime.now(UTC)
    made = _share(owner, capture)
    expires = datetime.fromisoformat(str(made["expires_at"]))
    assert before + timedelta(days=7) - timedelta(minutes=1) <= expires
    assert expires <= datetime.now(UTC) + timedelta(days=7)
    assert made["allow_download"] is False and made["created_by"] == owner.email
    never = _share(owner, capture, expires_in_s=None)
    assert never["expires_at"] is None


def test_an_analysis_only_link_refuses_the_file(app_client: TestClient) -> None:
    owner = _actor(app_client)
    payload = tiny_pcap(b"analysis only")
    capture = _upload(owner, payload)
    anonymous = TestClient(app_client.app, base_url=BASE_URL)

    analysis_only = _share(owner, capture)["token"]
    opened = anonymous.get(f"/api/v1/shared/{analysis_only}")
    assert opened.status_code == 200 and opened.json()["download_allowed"] is False
    _problem(
        anonymous.get(f"/api/v1/shared/{analysis_only}/file"), 403, "share_download_not_allowed"
    )

    with_file = _share(owner, capture, allow_download=True)["token"]
    opened = anonymous.get(f"/api/v1/shared/{with_file}")
    assert opened.status_code == 200 and opened.json()["download_allowed"] is True
    file = anonymous.get(f"/api/v1/shared/{with_file}/file")
    assert file.status_code == 200 and file.content == payload
    # members always may
    assert owner.client.get(f"/api/v1/captures/{capture}").json()["download_allowed"] is True


def test_revoked_expired_and_unknown_links_answer_apart(
    app_client: TestClient, engine: Engine
) -> None:
    owner = _actor(app_client)
    capture = _upload(owner, tiny_pcap(b"gone"))
    anonymous = TestClient(app_client.app, base_url=BASE_URL)
    revoked = _share(owner, capture)
    gone = owner.client.delete(
        f"/api/v1/captures/{capture}/shares/{revoked['id']}", headers=owner.headers()
    )
    assert gone.status_code == 204
    expired = _share(owner, capture, expires_in_s=3600)
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE share_links SET expires_at = now() - interval '1 s' WHERE id = :id"),
            {"id": expired["id"]},
        )
    for suffix in ("", "/findings", "/file"):
        _problem(anonymous.get(f"/api/v1/shared/{revoked['token']}{suffix}"), 410, "share_revoked")
        _problem(anonymous.get(f"/api/v1/shared/{expired['token']}{suffix}"), 410, "share_expired")
        _problem(anonymous.get(f"/api/v1/shared/{'x' * 32}{suffix}"), 404, "share_link_not_found")


def test_a_removed_members_links_are_revoked_and_owners_review_all_links(
    app_client: TestClient,
) -> None:
    owner, mate, stranger = (_actor(app_client) for _ in range(3))
    members = f"/api/v1/workspaces/{owner.workspace_id}/members"
    added = owner.client.post(members, json={"email": mate.email}, headers=owner.headers())
    assert added.status_code == 201
    capture = _upload(owner, tiny_pcap(b"team capture"))
    mates_link = _share(mate, capture, allow_download=True)
    owners_link = _share(owner, capture)
    # the mate's link to a capture in their own workspace is not touched by leaving this one
    mates_own = _share(mate, _upload(mate, tiny_pcap(b"mate's own"), mate.workspace_id))

    review = f"/api/v1/workspaces/{owner.workspace_id}/shares"
    listed = owner.client.get(review)
    assert listed.status_code == 200
    rows = {row["id"]: row for row in listed.json()}
    assert set(rows) == {mates_link["id"], owners_link["id"]}
    assert rows[mates_link["id"]]["created_by"] == mate.email
    assert rows[mates_link["id"]]["filename"] == "team.pcap"
    assert rows[mates_link["id"]]["allow_download"] is True
    _problem(mate.client.get(review), 403, "not_workspace_owner")
    _problem(stranger.client.get(review), 404, "workspace_not_found")

    anonymous = TestClient(app_client.app, base_url=BASE_URL)
    assert anonymous.get(f"/api/v1/shared/{mates_link['token']}/file").status_code == 200
    removed = owner.client.delete(f"{members}/{mate.user_id}", headers=owner.headers())
    assert removed.status_code == 204
    for suffix in ("", "/file"):
        _problem(
            anonymous.get(f"/api/v1/shared/{mates_link['token']}{suffix}"), 410, "share_revoked"
        )
    assert anonymous.get(f"/api/v1/shared/{owners_link['token']}").status_code == 200
    assert anonymous.get(f"/api/v1/shared/{mates_own['token']}").status_code == 200
    after = {row["id"]: row for row in owner.client.get(review).json()}
    assert after[mates_link["id"]]["revoked_at"] is not None
    assert after[owners_link["id"]]["revoked_at"] is None
