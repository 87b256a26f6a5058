"""PostgreSQL goes away under a running server: every endpoint answers 503 problem+json with
Retry-After (health included, as before), an upload in flight leaves no file behind, and the
server answers again once the database is back. The test runs its own database server, which it
stops, so the other tests' database is untouched."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from tcplens.db import embedded, migrate
from tcplens.db.engine import make_engine
from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import PASSWORD, tiny_pcap


@dataclass
class Running:
    port: int
    settings: Settings
    cluster: Path
    database: embedded.EmbeddedServer

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def running(new_cluster_dir: Callable[[], Path], tmp_path: Path) -> Iterator[Running]:
    cluster = new_cluster_dir()
    database = embedded.start(cluster)
    engine = make_engine(database.url)
    migrate.upgrade(engine)
    settings = Settings(
        data_dir=tmp_path / "data",
        spa_dir=tmp_path / "spa",
        in_process_worker=False,
        cookie_secure=False,
    )
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, engine), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield Running(port=port, settings=settings, cluster=cluster, database=database)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        engine.dispose()
        embedded.start(cluster).stop()  # whether or not the test restarted it


def _token(running: Running) -> str:
    """A user and an API token, made as an operator makes them (the CLI)."""
    email = f"down-{uuid.uuid4().hex[:8]}@example.com"
    env = {**os.environ, "TCPLENS_DATABASE_URL": running.database.url}
    tcplens = [sys.executable, "-m", "tcplens.cli"]
    subprocess.run(
        [*tcplens, "users", "create", email, "--password-stdin"],
        input=PASSWORD,
        env=env,
        text=True,
        check=True,
        capture_output=True,
    )
    made = subprocess.run(
        [*tcplens, "tokens", "create", "--user", email],
        env=env,
        text=True,
        check=True,
        capture_output=True,
    )
    return made.stdout.strip()


def _stored_files(settings: Settings) -> list[Path]:
    root = settings.blob_dir
    return sorted(p for p in root.rglob("*")) if root.exists() else []


def test_database_down_answers_503_and_an_upload_in_flight_leaves_no_file(
    running: Running,
) -> None:
    token = _token(running)
    auth = {"Authorization": f"Bearer {token}"}
    status, _, body = running.request("GET", "/api/v1/captures", headers=auth)
    assert status == 200, body
    workspace = json.loads(running.request("GET", "/api/v1/workspaces", headers=auth)[2])[0]["id"]

    # An upload in flight: the server has the first half (its partial file exists) when the
    # database goes away.
    data = tiny_pcap(b"y" * 1000) + bytes(200_000)  # (no worker runs: never analysed)
    upload = http.client.HTTPConnection("127.0.0.1", running.port, timeout=60)
    upload.putrequest("POST", "/api/v1/captures?filename=inflight.pcap")
    upload.putheader("Authorization", f"Bearer {token}")
    upload.putheader("Content-Length", str(len(data)))
    upload.endheaders()
    upload.send(data[:100_000])
    deadline = time.monotonic() + 30
    while not any(p.name.startswith(".partial-") for p in _stored_files(running.settings)):
        assert time.monotonic() < deadline, "the server never started storing the upload"
        time.sleep(0.01)
    running.database.stop()
    upload.send(data[100_000:])
    response = upload.getresponse()
    problem = json.loads(response.read())
    assert response.status == 503, problem
    assert problem["code"] == "database_unavailable"
    assert response.getheader("Retry-After") == "5"
    assert response.getheader("Content-Type") == "application/problem+json"
    # No blob without a row, no partial file, no empty folder.
    assert [p for p in _stored_files(running.settings) if p.is_file()] == []
    assert list((running.settings.blob_dir / "captures").iterdir()) == []

    requests: list[tuple[str, str, bytes | None, dict[str, str], str]]
    cookie_login = json.dumps({"email": "nobody@example.com", "password": PASSWORD}).encode()
    requests = [
        ("GET", "/api/v1/captures", None, auth, "database_unavailable"),
        ("GET", f"/api/v1/captures/{uuid.uuid4()}", None, auth, "database_unavailable"),
        ("GET", "/api/v1/workspaces", None, auth, "database_unavailable"),
        ("GET", f"/api/v1/workspaces/{workspace}/usage", None, auth, "database_unavailable"),
        ("GET", "/api/v1/auth/me", None, auth, "database_unavailable"),
        ("GET", "/api/v1/tokens", None, auth, "database_unavailable"),
        ("POST", "/api/v1/captures?filename=x.pcap", tiny_pcap(b"z"), auth, "database_unavailable"),
        (
            "POST",
            "/api/v1/auth/login",
            cookie_login,
            {"Content-Type": "application/json"},
            "database_unavailable",
        ),
        ("GET", "/api/v1/shared/" + "a" * 43, None, {}, "database_unavailable"),
        ("GET", "/api/v1/health", None, {}, "service_unavailable"),
    ]
    for method, path, sent, sent_headers, code in requests:
        status, headers, answer = running.request(method, path, sent, sent_headers)
        problem = json.loads(answer)
        assert (status, problem["code"]) == (503, code), (method, path, answer)
        assert headers["content-type"] == "application/problem+json"
        assert headers["retry-after"] == "5", (method, path)
    assert [p for p in _stored_files(running.settings) if p.is_file()] == []

    # Back up: the same server answers again (its pool checks connections before use).
    embedded.start(running.cluster)
    status, _, body = running.request("GET", "/api/v1/captures", headers=auth)
    assert status == 200, body
