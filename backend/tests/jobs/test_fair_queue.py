"""The analysis queue is fair between workspaces (services.analysis_queue), on the real queue with
a real worker: one workspace's backlog delays another's next analysis by at most one analysis,
both ways; and a workspace may have only so many analyses waiting.

The order analyses start in is procrastinate's own record ('started' events, in the order the
worker took the jobs), never a clock."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, repeated_capture, sign_up, tiny_pcap
from tests.capture.shared_captures import LAB, require
from tests.jobs.test_workers import _start_worker, _stop, _upload, _wait_for, client, data_dir

__all__ = ["client", "data_dir"]  # the fixtures, shared with test_workers

SOURCE = "rcvbuf_locked_download.pcap"


def _start_order(engine: Engine, ids: list[str]) -> list[str]:
    """The captures among ``ids`` whose analysis has started, in the order the worker took
    their jobs (first start of each)."""
    with engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT j.args->>'capture_id' AS capture, min(e.id) AS first"
                " FROM procrastinate_events e JOIN procrastinate_jobs j ON j.id = e.job_id"
                " WHERE e.type = 'started' AND j.task_name = 'tcplens.analyze_capture'"
                "   AND j.args->>'capture_id' = ANY(:ids)"
                " GROUP BY 1 ORDER BY 2"
            ),
            {"ids": ids},
        ).all()
    return [row.capture for row in rows]


def _uploads(actor: Actor, count: int, times: int = 3) -> list[str]:
    require(LAB)
    return [
        _upload(actor, repeated_capture(LAB / SOURCE, times, uuid.uuid4().bytes))
        for _ in range(count)
    ]


def _two_workspaces(client: TestClient) -> tuple[Actor, Actor]:
    """Two users, each with a workspace of their own and a client carrying their session."""
    return sign_up(client), sign_up(TestClient(client.app, base_url=str(client.base_url)))


def _labels(order: list[str], a: list[str]) -> str:
    return "".join("A" if capture in a else "B" for capture in order)


def test_a_workspace_with_one_upload_goes_ahead_of_anothers_backlog(
    client: TestClient, engine: Engine, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    a, b = _two_workspaces(client)
    a_ids = _uploads(a, 4)
    b_ids = _uploads(b, 1)  # after all of A's: first in, first out would run it last
    worker = _start_worker(database_url, data_dir, tmp_path / "worker.log")
    try:
        _wait_for(engine, a_ids + b_ids, {"done", "failed"}, timeout=600)
    finally:
        _stop(worker)
    # B's one analysis runs after A's first, ahead of A's other three.
    assert _labels(_start_order(engine, a_ids + b_ids), a_ids) == "ABAAA"


def test_two_backlogs_take_turns_while_the_worker_runs(
    client: TestClient, engine: Engine, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    a, b = _two_workspaces(client)
    a_ids = _uploads(a, 6)
    worker = _start_worker(database_url, data_dir, tmp_path / "worker.log")
    try:
        # B uploads three while A's backlog is being worked through (A's earlier jobs done: the
        # places A's waiting jobs were given at upload are behind by then).
        deadline = time.monotonic() + 600
        while len(_start_order(engine, a_ids)) < 3:
            assert time.monotonic() < deadline, "A's analyses did not start"
            time.sleep(0.02)
        b_ids = _uploads(b, 3)
        a_started_before = len(_start_order(engine, a_ids))
        assert a_started_before <= 4, "A's backlog ran out before B uploaded: longer analyses"
        _wait_for(engine, a_ids + b_ids, {"done", "failed"}, timeout=900)
    finally:
        _stop(worker)
    order = _labels(_start_order(engine, a_ids + b_ids), a_ids)
    assert sorted(order) == sorted("A" * 6 + "BBB")
    # B's first starts next, or after the one of A's that the worker may have taken while B's
    # upload was being committed.
    assert order.index("B") <= a_started_before + 1, order
    # From then on the two take turns: B's backlog never holds back A's next by more than one.
    rest = order[order.index("B") :]
    last_a = rest.rindex("A")
    assert "BB" not in rest[:last_a], order
    assert "AA" not in rest[: rest.rindex("B")], order


@pytest.fixture
def limited_client(data_dir: Path, engine: Engine) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=data_dir,
        spa_dir=data_dir / "spa",
        in_process_worker=False,
        uploads_per_minute=1000.0,
        max_queued_analyses=3,
    )
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        yield client


def test_a_workspace_may_have_only_so_many_analyses_waiting(
    limited_client: TestClient, engine: Engine
) -> None:
    a, b = _two_workspaces(limited_client)
    for _ in range(3):
        _upload(a, tiny_pcap(uuid.uuid4().bytes))
    refused = a.client.post(
        "/api/v1/captures?filename=x.pcap",
        content=tiny_pcap(uuid.uuid4().bytes),
        headers=a.headers(),
    )
    assert refused.status_code == 429, refused.text
    assert refused.headers["content-type"] == "application/problem+json"
    assert int(refused.headers["retry-after"]) > 0
    body = refused.json()
    assert body["code"] == "analysis_queue_full"
    assert (body["queued"], body["limit"]) == (3, 3)
    with engine.connect() as connection:
        waiting = connection.execute(
            text("SELECT count(*) FROM captures WHERE workspace_id = :w AND status = 'queued'"),
            {"w": a.workspace_id},
        ).scalar_one()
    assert waiting == 3
    # Another workspace's queue is its own.
    _upload(b, tiny_pcap(uuid.uuid4().bytes))
    # A place comes free when one of A's analyses is no longer waiting (here: it is deleted).
    first = a.client.get(f"/api/v1/captures?workspace_id={a.workspace_id}").json()["items"][0]
    deleted = a.client.delete(f"/api/v1/captures/{first['id']}", headers=a.headers())
    assert deleted.status_code == 204, deleted.text
    _upload(a, tiny_pcap(uuid.uuid4().bytes))
