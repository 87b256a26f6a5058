"""An analysis child killed by a signal: named truthfully, retried a bounded number of times; and
the same bytes uploaded again after a failed analysis start a new one."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import psutil
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.services.analysis import MAX_KILLED_ATTEMPTS
from tests.api.service_fixtures import repeated_capture, sign_up
from tests.capture.shared_captures import LAB, require
from tests.jobs.test_workers import _start_worker, _status, _stop, _wait_for, client, data_dir

__all__ = ["client", "data_dir"]  # the fixtures, shared with test_workers


def _analysis_children(worker: int) -> list[psutil.Process]:
    """The worker's analysis processes: children its fork server (a child of the worker) forked,
    so with the fork server's own command line (what the fork server runs while it starts, such
    as ldconfig, has another)."""
    found: list[psutil.Process] = []
    for child in psutil.Process(worker).children():
        try:
            command = child.cmdline()
            found.extend(g for g in child.children() if g.cmdline() == command)
        except psutil.Error:
            continue
    return found


def _the_analysis(engine: Engine, capture_id: str, worker: int) -> psutil.Process:
    """The worker's analysis child, once it has reported reading the capture (the fork server's
    own no-op start-up child is gone by then; the first run waits for the fork server to load the
    kernels)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        with engine.connect() as connection:
            reading = connection.execute(
                text("SELECT progress_bytes > 0 FROM captures WHERE id = :id"), {"id": capture_id}
            ).scalar_one()
        children = _analysis_children(worker) if reading else []
        if len(children) == 1:
            return children[0]
        time.sleep(0.01)
    pytest.fail("no analysis started")


def _kill_the_analysis(engine: Engine, capture_id: str, worker: int) -> None:
    child = _the_analysis(engine, capture_id, worker)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)


def test_a_killed_analysis_is_named_retried_then_failed_and_a_new_upload_runs_it_again(
    client: TestClient, engine: Engine, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    require(LAB)
    actor = sign_up(client)
    # ~34 MB: its analysis takes long enough to be killed before it ends
    data = repeated_capture(LAB / "rcvbuf_locked_download.pcap", 40, uuid.uuid4().bytes)
    response = actor.client.post(
        "/api/v1/captures?filename=k.pcap", content=data, headers=actor.headers()
    )
    assert response.status_code == 202, response.text
    capture_id = response.json()["capture"]["id"]
    first_job = response.json()["job"]["id"]
    worker = _start_worker(database_url, data_dir, tmp_path / "worker.log")
    try:
        for attempt in range(1, MAX_KILLED_ATTEMPTS + 1):
            _kill_the_analysis(engine, capture_id, worker.pid)
            if attempt < MAX_KILLED_ATTEMPTS:
                # back in the queue, saying why the last run ended
                _wait_for(engine, [capture_id], {"queued"}, timeout=60)
                assert _status(engine, capture_id) == ("queued", attempt)
        _wait_for(engine, [capture_id], {"failed"}, timeout=60)
        body = actor.client.get(f"/api/v1/captures/{capture_id}").json()
        assert body["error"] == {
            "code": "analysis_killed",
            "message": "the analysis process was killed by SIGKILL before it finished "
            f"(on each of {MAX_KILLED_ATTEMPTS} attempts)",
        }
        assert _status(engine, capture_id) == ("failed", MAX_KILLED_ATTEMPTS)
        with engine.connect() as connection:
            job_status = connection.execute(
                text("SELECT status FROM procrastinate_jobs WHERE id = :id"), {"id": first_job}
            ).scalar_one()
        assert job_status == "succeeded"  # ended: no fourth run

        # The same bytes again: a new analysis of the same capture, not the failed one.
        again = actor.client.post(
            "/api/v1/captures?filename=k.pcap", content=data, headers=actor.headers()
        )
        assert again.status_code == 202, again.text
        assert again.json()["capture"]["id"] == capture_id
        assert again.json()["capture"]["status"] == "queued"
        assert again.json()["capture"]["error"] is None
        assert again.json()["job"]["id"] != first_job
        _wait_for(engine, [capture_id], {"done", "failed"}, timeout=600)
        assert _status(engine, capture_id) == ("done", 1)
    finally:
        _stop(worker)


def test_a_worker_stopped_by_a_signal_puts_its_running_analysis_back_in_the_queue(
    client: TestClient, engine: Engine, database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """SIGTERM (docker stop, systemd) stops the worker at once: its analysis is killed, not
    waited for, and its job runs again on the next worker."""
    require(LAB)
    actor = sign_up(client)
    data = repeated_capture(LAB / "rcvbuf_locked_download.pcap", 40, uuid.uuid4().bytes)
    response = actor.client.post(
        "/api/v1/captures?filename=t.pcap", content=data, headers=actor.headers()
    )
    capture_id = response.json()["capture"]["id"]
    worker = _start_worker(database_url, data_dir, tmp_path / "stopped.log")
    survivor = None
    try:
        child = _the_analysis(engine, capture_id, worker.pid)
        started = [*psutil.Process(worker.pid).children(recursive=True)]
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=120) == 0
        assert child in started
        _, alive = psutil.wait_procs(started, timeout=30)
        assert alive == []
        assert _status(engine, capture_id) == ("queued", 1)
        survivor = _start_worker(database_url, data_dir, tmp_path / "survivor.log")
        _wait_for(engine, [capture_id], {"done", "failed"}, timeout=600)
    finally:
        _stop(worker)
        if survivor is not None:
            _stop(survivor)
    assert _status(engine, capture_id) == ("done", 2)
