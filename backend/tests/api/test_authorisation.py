"""The authorisation matrix: every capture endpoint × owner, teammate, another workspace,
anonymous, API tokens and share links. Another workspace's capture answers exactly like a
missing one (404); a share link opens its own capture read-only and nothing else."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.services import analysis
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up, tiny_pcap
from tests.capture.shared_captures import LAB, require

READS = [
    "/api/v1/captures/{id}",
    "/api/v1/captures/{id}/flows",
    "/api/v1/captures/{id}/findings",
    "/api/v1/captures/{id}/flows/1",
    "/api/v1/captures/{id}/flows/1/series?direction=server_to_client&max_points=100",
    "/api/v1/captures/{id}/file",
    "/api/v1/captures/{id}/flows/1/frames",
    "/api/v1/captures/{id}/flows/1/packets",
    "/api/v1/captures/{id}/shares",
]
SHARED_READS = [
    "",
    "/flows",
    "/findings",
    "/flows/1",
    "/flows/1/series?max_points=100",
    "/file",
    "/flows/1/frames",
    "/flows/1/packets",
]


@dataclass
class World:
    owner: Actor
    mate: Actor
    stranger: Actor
    capture_id: str
    other_capture_id: str
    anonymous: TestClient


@pytest.fixture(scope="module")
def app_client(tmp_path_factory: pytest.TempPathFactory, engine: Engine) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("authorisation")
    settings = Settings(
        data_dir=data / "data",
        spa_dir=data / "spa",
        in_process_worker=False,
        login_attempts_per_minute=1000.0,
        uploads_per_minute=1000.0,
    )
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        yield client


@pytest.fixture(scope="module")
def analysed(app_client: TestClient) -> dict[str, Actor | str]:
    """Two analysed captures, made once for the module: the owner's and a stranger's."""
    require(LAB)
    app = app_client.app
    owner, stranger = (sign_up(TestClient(app, base_url="https://testserver")) for _ in range(2))
    data = (LAB / "nagle_delack.pcap").read_bytes()
    made: dict[str, Actor | str] = {"owner": owner, "stranger": stranger}
    for role, actor in (("capture", owner), ("other_capture", stranger)):
        response = actor.client.post(
            "/api/v1/captures?filename=n.pcap", content=data, headers=actor.headers()
        )
        assert response.status_code == 202
        made[role] = response.json()["capture"]["id"]
        analysis.analyze(app.state.service, uuid.UUID(str(made[role])))  # type: ignore[attr-defined]
    return made


@pytest.fixture
def world(app_client: TestClient, analysed: dict[str, Actor | str]) -> World:
    owner, stranger = analysed["owner"], analysed["stranger"]
    assert isinstance(owner, Actor) and isinstance(stranger, Actor)
    # a fresh teammate per test, so what one test does to membership stays in it
    mate = sign_up(TestClient(app_client.app, base_url="https://testserver"))
    invited = owner.client.post(
        f"/api/v1/workspaces/{owner.workspace_id}/members",
        json={"email": mate.email},
        headers=owner.headers(),
    )
    assert invited.status_code == 201
    return World(
        owner,
        mate,
        stranger,
        str(analysed["capture"]),
        str(analysed["other_capture"]),
        TestClient(app_client.app, base_url="https://testserver"),
    )


def test_reads_owner_teammate_stranger_anonymous(world: World) -> None:
    for template in READS:
        url = template.format(id=world.capture_id)
        assert world.owner.client.get(url).status_code == 200, url
        assert world.mate.client.get(url).status_code == 200, url
        assert world.stranger.client.get(url).status_code == 404, url
        assert world.anonymous.get(url).status_code == 401, url
        # a stranger's answer is the same as for an id that does not exist
        missing = world.stranger.client.get(template.format(id=uuid.uuid4()))
        assert missing.status_code == 404
        assert world.stranger.client.get(url).json()["code"] == missing.json()["code"]


def test_listing_another_workspace_is_404(world: World) -> None:
    url = f"/api/v1/captures?workspace_id={world.owner.workspace_id}"
    assert world.mate.client.get(url).status_code == 200
    assert world.stranger.client.get(url).status_code == 404
    listed = [c["id"] for c in world.stranger.client.get("/api/v1/captures").json()["items"]]
    assert listed == [world.other_capture_id]


def test_writes_need_the_right_role(world: World) -> None:
    url = f"/api/v1/captures/{world.capture_id}"
    assert world.stranger.client.delete(url, headers=world.stranger.headers()).status_code == 404
    assert world.anonymous.delete(url).status_code == 401
    refused = world.mate.client.delete(url, headers=world.mate.headers())
    assert refused.status_code == 403 and refused.json()["code"] == "not_capture_owner"
    shares = f"{url}/shares"
    assert world.mate.client.post(shares, json={}, headers=world.mate.headers()).status_code == 201
    assert (
        world.stranger.client.post(shares, json={}, headers=world.stranger.headers()).status_code
        == 404
    )
    assert world.anonymous.post(shares, json={}).status_code == 401
    # uploads into someone else's workspace
    foreign = world.stranger.client.post(
        f"/api/v1/captures?workspace_id={world.owner.workspace_id}",
        content=tiny_pcap(b"intrude"),
        headers=world.stranger.headers(),
    )
    assert foreign.status_code == 404
    # the owner deletes (a capture of their own made for this, so the module's stays)
    doomed = world.mate.client.post(
        f"/api/v1/captures?filename=d.pcap&workspace_id={world.owner.workspace_id}",
        content=tiny_pcap(uuid.uuid4().bytes),
        headers=world.mate.headers(),
    ).json()["capture"]["id"]
    assert (
        world.owner.client.delete(
            f"/api/v1/captures/{doomed}", headers=world.owner.headers()
        ).status_code
        == 204
    )


def test_api_tokens_are_scoped_to_their_workspace(world: World) -> None:
    def token_for(actor: Actor, workspace_id: str | None = None) -> dict[str, str]:
        body = {"name": "t"} | ({"workspace_id": workspace_id} if workspace_id else {})
        issued = actor.client.post("/api/v1/tokens", json=body, headers=actor.headers())
        assert issued.status_code == 201
        return {"Authorization": f"Bearer {issued.json()['token']}"}

    url = f"/api/v1/captures/{world.capture_id}/flows"
    assert world.anonymous.get(url, headers=token_for(world.owner)).status_code == 200
    assert world.anonymous.get(url, headers=token_for(world.stranger)).status_code == 404
    second = world.owner.client.post(
        "/api/v1/workspaces", json={"name": "second"}, headers=world.owner.headers()
    ).json()["id"]
    # the owner's token for another workspace of theirs does not open this one
    assert world.anonymous.get(url, headers=token_for(world.owner, second)).status_code == 404
    # a stranger cannot mint a token for a workspace they are not in
    refused = world.stranger.client.post(
        "/api/v1/tokens",
        json={"workspace_id": str(world.owner.workspace_id)},
        headers=world.stranger.headers(),
    )
    assert refused.status_code == 404


def test_share_links_open_one_capture_read_only(world: World, engine: Engine) -> None:
    shares = f"/api/v1/captures/{world.capture_id}/shares"
    issued = world.owner.client.post(
        shares, json={"allow_download": True}, headers=world.owner.headers()
    ).json()
    token = issued["token"]
    assert len(token) >= 22 and issued["url"].endswith(f"/shared/{token}")  # ≥ 128 bits
    for suffix in SHARED_READS:
        response = world.anonymous.get(f"/api/v1/shared/{token}{suffix}")
        assert response.status_code == 200, suffix
    assert world.anonymous.get(f"/api/v1/shared/{token}").json()["id"] == world.capture_id
    # the share token is not a credential for anything else
    bearer = {"Authorization": f"Bearer {token}"}
    assert (
        world.anonymous.get(f"/api/v1/captures/{world.capture_id}", headers=bearer).status_code
        == 401
    )
    assert world.anonymous.delete(f"/api/v1/shared/{token}").status_code == 405
    assert world.anonymous.get(f"/api/v1/shared/{'x' * 32}").status_code == 404

    # expired → 410 share_expired
    expiring = world.owner.client.post(
        shares, json={"expires_in_s": 3600}, headers=world.owner.headers()
    ).json()
    assert world.anonymous.get(f"/api/v1/shared/{expiring['token']}").status_code == 200
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE share_links SET expires_at = now() - interval '1 second' WHERE id = :id"),
            {"id": expiring["id"]},
        )
    assert world.anonymous.get(f"/api/v1/shared/{expiring['token']}").status_code == 410

    # revoked → 410 share_revoked, and a stranger cannot revoke it
    link = f"{shares}/{issued['id']}"
    assert world.stranger.client.delete(link, headers=world.stranger.headers()).status_code == 404
    assert world.owner.client.delete(link, headers=world.owner.headers()).status_code == 204
    for suffix in SHARED_READS:
        gone = world.anonymous.get(f"/api/v1/shared/{token}{suffix}")
        assert gone.status_code == 410 and gone.json()["code"] == "share_revoked", suffix
