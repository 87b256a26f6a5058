"""GET /api/v1/compare: two analysed captures of the caller's workspace, the lab's before/after
pair (10 connections, then one pooled); 404 for another tenant's capture or a share link, 422
when the captures share no transfer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up
from tests.api.tenants import ANALYSIS_WAIT_S, BASE_URL
from tests.diagnosis.pairs import NO_REUSE, RWND, pair_file


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory, engine: Engine) -> Iterator[TestClient]:
    data = tmp_path_factory.mktemp("compare")
    settings = Settings(
        data_dir=data / "data",
        spa_dir=data / "spa",
        in_process_worker=True,
        login_attempts_per_minute=100_000.0,
        uploads_per_minute=100_000.0,
    )
    with TestClient(create_app(settings, engine), base_url=BASE_URL) as client:
        yield client


def _analysed(actor: Actor, path: Path) -> str:
    uploaded = actor.client.post(
        f"/api/v1/captures?filename={path.name}", content=path.read_bytes(), headers=actor.headers()
    )
    assert uploaded.status_code == 202, uploaded.text
    capture_id = str(uploaded.json()["capture"]["id"])
    deadline = time.monotonic() + ANALYSIS_WAIT_S
    while (status := actor.client.get(f"/api/v1/captures/{capture_id}").json()["status"]) in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert status == "done"
    return capture_id


def test_compare_two_captures_of_the_workspace(client: TestClient) -> None:
    me = sign_up(TestClient(client.app, base_url=BASE_URL))
    before = _analysed(me, pair_file(NO_REUSE, "before"))
    after = _analysed(me, pair_file(NO_REUSE, "after"))

    answer = me.client.get(f"/api/v1/compare?before={before}&after={after}")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["before"] == {
        "capture": f"{NO_REUSE}__before.pcap.gz",
        "duration_s": body["before"]["duration_s"],
        "id": before,
    }
    assert body["resolved"] == ["no-connection-reuse"] and body["new"] == []
    [t] = body["transfers"]
    assert (t["server"], t["before_connections"], t["after_connections"]) == (
        "192.0.2.2:8080",
        10,
        1,
    )
    assert t["bytes"] == 1025030 and body["speedup"] > 1.5
    [p] = t["predictions"]
    assert p["code"] == "no-connection-reuse" and 0.5 < p["vs_after"] < 2
    # the finding on the capture carries the same prediction
    findings = me.client.get(f"/api/v1/captures/{before}/findings").json()
    assert findings[0]["if_fixed"]["duration_s"] == p["duration_s"]

    swapped = me.client.get(f"/api/v1/compare?before={after}&after={before}").json()
    assert swapped["new"] == ["no-connection-reuse"] and swapped["speedup"] < 1

    other = _analysed(me, pair_file(RWND, "before"))
    refused = me.client.get(f"/api/v1/compare?before={before}&after={other}")
    assert refused.status_code == 422
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["code"] == "different_transfers"

    stranger = sign_up(TestClient(client.app, base_url=BASE_URL))
    foreign = stranger.client.get(f"/api/v1/compare?before={before}&after={after}")
    assert foreign.status_code == 404 and foreign.json()["code"] == "capture_not_found"
    missing = me.client.get(
        f"/api/v1/compare?before={before}&after=00000000-0000-4000-8000-000000000000"
    )
    assert missing.status_code == 404
    malformed = me.client.get(f"/api/v1/compare?before={before}&after=nope")
    assert malformed.status_code == 422

    share = me.client.post(f"/api/v1/captures/{before}/shares", json={}, headers=me.headers())
    token = share.json()["token"]
    anonymous = TestClient(client.app, base_url=BASE_URL)
    via_share = anonymous.get(
        f"/api/v1/compare?before={before}&after={after}",
        headers={"Authorization": f"Bearer {token}"},
    )
    assert via_share.status_code in (401, 404)
