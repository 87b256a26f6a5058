"""Real worker processes on the real queue: a worker killed with SIGKILL mid-job has its job
finished by another; two workers racing for jobs run each job exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, repeated_capture, sign_up
from tests.capture.shared_captures import LAB, require


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def client(data_dir: Path, engine: Engine) -> Iterator[TestClient]:
    settings = Settings(
        data_dir=data_dir,
        spa_dir=data_dir / "spa",
        in_process_worker=False,
        login_attempts_per_minute=1000.0,
        uploads_per_minute=1000.0,
    )
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        yield client


def _start_worker(database_url: str, data_dir: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "TCPLENS_DATABASE_URL": database_url,
        "TCPLENS_DATA_DIR": str(data_dir),
        "TCPLENS_WORKER_HEARTBEAT_S": "0.5",
        "TCPLENS_STALLED_WORKER_TIMEOUT_S": "2",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "tcplens.cli", "worker"],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _stop(worker: subprocess.Popen[bytes]) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def _upload(actor: Actor, data: bytes) -> str:
    response = actor.client.post(
        "/api/v1/captures?filename=x.pcap", content=data, headers=actor.headers()
    )
    assert response.status_code == 202, response.text
    return str(response.json()["capture"]["id"])


def _status(engine: Engine, capture_id: str) -> tuple[str, int]:
    with engine.connect() as connection:
        row = connection.execute(
            text("SELECT status, attempts FROM captures WHERE id = :id"), {"id": capture_id}
        ).one()
    return str(row.status), int(row.attempts)


def _wait_for(engine: Engine, ids: list[str], statuses: set[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(_status(engine, i)[0] in statuses for i in ids):
            return
        time.sleep(0.02)
    pytest.fail(f"captures did not reach {statuses}: {[_status(engine, i) for i in ids]}")


def test_a_killed_workers_job_is_finished_by_another(
    client: TestClient, engine: Engine, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    require(LAB)
    actor = sign_up(client)
    capture_id = _upload(
        actor, repeated_capture(LAB / "rcvbuf_locked_download.pcap", 12, uuid.uuid4().bytes)
    )
    doomed = _start_worker(database_url, data_dir, tmp_path / "doomed.log")
    survivor = None
    try:
        _wait_for(engine, [capture_id], {"running"}, timeout=60)
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait()
        assert _status(engine, capture_id) == ("running", 1)
        survivor = _start_worker(database_url, data_dir, tmp_path / "survivor.log")
        _wait_for(engine, [capture_id], {"done", "failed"}, timeout=120)
    finally:
        if survivor is not None:
            _stop(survivor)
    assert _status(engine, capture_id) == ("done", 2)
    flows = actor.client.get(f"/api/v1/captures/{capture_id}/flows").json()
    assert flows["total"] >= 1


def test_two_workers_run_each_job_once(
    client: TestClient, engine: Engine, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    require(LAB)
    actor = sign_up(client)
    sources = sorted(LAB.glob("*.pcap"))[:6]
    ids = [_upload(actor, repeated_capture(s, 1, uuid.uuid4().bytes)) for s in sources]
    workers = [_start_worker(database_url, data_dir, tmp_path / f"w{i}.log") for i in range(2)]
    try:
        _wait_for(engine, ids, {"done", "failed"}, timeout=180)
    finally:
        for worker in workers:
            _stop(worker)
    assert all(_status(engine, i) == ("done", 1) for i in ids)
    with engine.connect() as connection:
        started = connection.execute(
            text(
                "SELECT j.args->>'capture_id' AS capture, count(*) AS runs"
                " FROM procrastinate_events e JOIN procrastinate_jobs j ON j.id = e.job_id"
                " WHERE e.type = 'started' AND j.task_name = 'tcplens.analyze_capture'"
                " GROUP BY 1"
            )
        ).all()
    runs = {row.capture: row.runs for row in started}
    assert {i: runs.get(i) for i in ids} == {i: 1 for i in ids}
