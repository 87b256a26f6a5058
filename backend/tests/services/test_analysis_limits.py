"""Untrusted captures through the job: malformed files end as a clear failure or a result, never
an internal error; an analysis over its time or memory limit is stopped and reported in words,
and the worker goes on with the next job."""

from __future__ import annotations

import gzip
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.services import analysis
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, repeated_capture, sign_up
from tests.capture.shared_captures import LAB, TCPDUMP_TESTS, require

MALFORMED = [
    "heapoverflow-tcp_print.pcap",
    "heap-overflow-1.pcap",
    "hoobr_chdlc_print.pcap",
    "bgp-as-path-oobr.pcap",
    "gre-heapoverflow-2.pcap",
    "atm-heapoverflow.pcap",
]


def _client(settings: Settings, engine: Engine, **update: object) -> TestClient:
    update = {"login_attempts_per_minute": 1000.0, "uploads_per_minute": 1000.0, **update}
    return TestClient(
        create_app(settings.model_copy(update=update), engine), base_url="https://testserver"
    )


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    with _client(settings, engine) as client:
        yield client


def _analyse(client: TestClient, actor: Actor, data: bytes, name: str) -> dict[str, Any]:
    response = actor.client.post(
        f"/api/v1/captures?filename={name}", content=data, headers=actor.headers()
    )
    if response.status_code == 415:  # not even a capture's magic: refused at upload
        return {"status": "refused"}
    assert response.status_code == 202, response.text
    capture_id = response.json()["capture"]["id"]
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    capture: dict[str, object] = actor.client.get(f"/api/v1/captures/{capture_id}").json()
    return capture


def test_malformed_captures_never_end_in_an_internal_error(client: TestClient) -> None:
    require(TCPDUMP_TESTS)
    actor = sign_up(client)
    outcomes: dict[str, tuple[Any, Any]] = {}
    for name in MALFORMED:
        capture = _analyse(client, actor, (TCPDUMP_TESTS / name).read_bytes(), name)
        error = capture.get("error") or {}
        outcomes[name] = (capture["status"], error.get("code"))
    for name, (status, code) in outcomes.items():
        assert status in ("done", "failed", "refused"), (name, status)
        assert code not in ("internal_error", "analysis_crashed"), (name, code)


def test_an_analysis_over_its_time_limit_is_stopped(settings: Settings, engine: Engine) -> None:
    require(LAB)
    with _client(settings, engine, analysis_timeout_s=0.001) as client:
        actor = sign_up(client)
        capture = _analyse(
            client, actor, (LAB / "bottleneck_download.pcap").read_bytes(), "slow.pcap"
        )
    assert capture["status"] == "failed"
    assert capture["error"] == {
        "code": "analysis_timeout",
        "message": "the analysis took longer than the limit of 0.001 s",
    }


def _wait_until_finished(actor: Actor, capture_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        capture: dict[str, object] = actor.client.get(f"/api/v1/captures/{capture_id}").json()
        if capture["status"] in ("done", "failed"):
            return capture
        time.sleep(0.05)
    pytest.fail(f"capture {capture_id} still {capture['status']}")


def _upload(actor: Actor, data: bytes, name: str) -> str:
    response = actor.client.post(
        f"/api/v1/captures?filename={name}", content=data, headers=actor.headers()
    )
    assert response.status_code == 202, response.text
    return str(response.json()["capture"]["id"])


@pytest.mark.parametrize(
    ("compressed", "where"),
    [
        # 100 MB of pcap: mapping the file for reading is already over the cap (ENOMEM).
        (False, "reading"),
        # The same packets gzip-compressed (20 MB): read into memory, the analysis's own arrays
        # go over the cap (MemoryError).
        (True, "analysis"),
    ],
)
def test_an_analysis_over_its_memory_cap_fails_in_words_and_the_worker_goes_on(
    settings: Settings, engine: Engine, compressed: bool, where: str
) -> None:
    require(LAB)
    data = repeated_capture(LAB / "rcvbuf_locked_download.pcap", 120, where.encode())
    if compressed:
        data = gzip.compress(data, compresslevel=1)
    cap = 64 * 2**20  # the smallest cap the settings allow
    with _client(settings, engine, analysis_memory_bytes=cap, in_process_worker=True) as client:
        actor = sign_up(client)
        capture = _wait_until_finished(actor, _upload(actor, data, "big.pcap"))
        # The same worker, still alive, analyses the next capture within the cap.
        small = _wait_until_finished(
            actor, _upload(actor, (LAB / "stop_and_wait_app.pcap").read_bytes(), "small.pcap")
        )
    assert capture["status"] == "failed"
    assert capture["error"] == {
        "code": "analysis_memory_limit",
        "message": "the analysis needed more memory than the limit of 64 MiB",
    }
    assert small["status"] == "done", small
