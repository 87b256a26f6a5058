"""Every capture of the shared corpus through the service as a user sends it: the upload, the real
worker's analysis, and every read of its results the SPA or a script makes.

The corpus is files other projects wrote (zeek, suricata, nDPI, PcapPlusPlus, ... and tcpdump's
own test suite, which holds many broken and hostile files on purpose). Whatever a file holds, the
service answers: no response is a 5xx, every 4xx is RFC 9457 problem+json, and each capture ends
``done`` or ``failed`` with a stable error code. What the service stores is what the core
computes: a capture the core reads ends ``done`` with as many flows as its TCP analysis found;
one it refuses ends ``failed`` with the reader's own error code.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.capture import read_capture
from tcplens.capture.errors import CaptureError
from tcplens.main import create_app
from tcplens.settings import Settings
from tcplens.storage.series import ARROW_STREAM_MEDIA_TYPE
from tcplens.tcp.analyze import analyze_tcp
from tests.api.service_fixtures import Actor, sign_up
from tests.capture.shared_captures import SHARED_CAPTURES, require, shared_files

BASE_URL = "https://testserver"
PROBLEM_JSON = "application/problem+json"
CORPUS = SHARED_CAPTURES / "corpus"
FOLDERS = ("real-world", "tcpdump-tests", "practical-packet-analysis")
ANALYSIS_WAIT_S = 600.0  # the first analysis after a change compiles the kernels
BATCH = 40  # uploads in flight at once (the queue's per-workspace bound is set above it)
FLOWS_READ = 3  # per capture, the busiest flows whose reads are all made (bounds the test's time)


@dataclass
class Expected:
    """What the core makes of a file: its flow count, or the reader's error code."""

    flows: int | None
    error: str | None


def expected(path: Path) -> Expected:
    try:
        capture = read_capture(path)
    except CaptureError as error:
        return Expected(None, error.code)
    return Expected(len(analyze_tcp(capture.packets, capture.info.first_ts_ns).flows), None)


def corpus() -> list[Path]:
    return [p for folder in FOLDERS for p in shared_files(CORPUS / folder)]


@dataclass
class Answers:
    """Every response of the sweep, for the assertions at the end (one failure lists all)."""

    server_errors: list[str]
    bad_problems: list[str]

    def check(self, what: str, response: httpx2.Response) -> httpx2.Response:
        if response.status_code >= 500:
            self.server_errors.append(f"{what}: {response.status_code} {response.text[:200]}")
        elif response.status_code >= 400:
            kind = response.headers.get("content-type", "")
            body = response.json() if kind.startswith(PROBLEM_JSON) else {}
            if not kind.startswith(PROBLEM_JSON) or body.get("status") != response.status_code:
                self.bad_problems.append(f"{what}: {response.status_code} {kind}")
        return response


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, engine: Engine) -> Iterator[Actor]:
    data = tmp_path_factory.mktemp("corpus")
    settings = Settings(
        data_dir=data / "data",
        spa_dir=data / "spa",
        in_process_worker=True,  # the real worker analyses the uploads
        uploads_per_minute=100_000.0,
        max_queued_analyses=BATCH + 1,
    )
    with TestClient(create_app(settings, engine), base_url=BASE_URL) as client:
        yield sign_up(TestClient(client.app, base_url=BASE_URL))


def _wait(owner: Actor, answers: Answers, ids: dict[Path, str]) -> dict[Path, dict[str, Any]]:
    done: dict[Path, dict[str, Any]] = {}
    deadline = time.monotonic() + ANALYSIS_WAIT_S
    while len(done) < len(ids):
        for path, capture_id in ids.items():
            if path in done:
                continue
            got = answers.check(path.name, owner.client.get(f"/api/v1/captures/{capture_id}"))
            if got.json()["status"] in ("done", "failed"):
                done[path] = got.json()
        assert time.monotonic() < deadline, f"still analysing: {sorted(set(ids) - set(done))}"
        time.sleep(0.1)
    return done


def _read_results(owner: Actor, answers: Answers, path: Path, capture_id: str) -> int:
    """Every read of a done capture's results; returns its flow count."""
    base = f"/api/v1/captures/{capture_id}"
    get = owner.client.get
    flows: list[dict[str, Any]] = []
    while True:
        page = answers.check(path.name, get(f"{base}/flows?limit=500&offset={len(flows)}")).json()
        flows += page["items"]
        if not page["items"] or len(flows) >= page["total"]:
            break
    answers.check(f"{path.name} findings", get(f"{base}/findings"))
    answers.check(f"{path.name} file", get(f"{base}/file"))
    busiest = sorted(flows, key=lambda f: -int(f["packets"]))[:FLOWS_READ]
    for flow in busiest:
        where = f"{base}/flows/{flow['id']}"
        what = f"{path.name} flow {flow['id']}"
        answers.check(what, get(where))
        for direction in ("client_to_server", "server_to_client"):
            series = f"{where}/series?direction={direction}"
            answers.check(f"{what} series", get(series))
            answers.check(
                f"{what} series arrow",
                get(f"{series}&max_points=200", headers={"Accept": ARROW_STREAM_MEDIA_TYPE}),
            )
        answers.check(f"{what} frames", get(f"{where}/frames"))
        answers.check(f"{what} packets", get(f"{where}/packets"))
    return len(flows)


def test_every_corpus_capture_through_the_service(service: Actor) -> None:
    require(CORPUS)
    files = corpus()
    answers = Answers([], [])
    wrong: list[str] = []
    outcomes = {"done": 0, "failed": 0, "refused": 0}
    for at in range(0, len(files), BATCH):
        batch = files[at : at + BATCH]
        ids: dict[Path, str] = {}
        for path in batch:
            sent = answers.check(
                path.name,
                service.client.post(
                    f"/api/v1/captures?filename={path.name}",
                    content=path.read_bytes(),
                    headers=service.headers(),
                ),
            )
            if sent.status_code == 202:
                ids[path] = sent.json()["capture"]["id"]
            else:  # refused at the door: the same refusal the reader gives
                outcomes["refused"] += 1
                code = sent.json().get("code")
                if expected(path).error is None:
                    wrong.append(f"{path.name}: upload refused ({code}), the core reads it")
        for path, capture in _wait(service, answers, ids).items():
            outcomes[capture["status"]] += 1
            want = expected(path)
            if capture["status"] == "failed":
                code = (capture.get("error") or {}).get("code")
                if want.error is None or code != want.error:
                    wrong.append(f"{path.name}: failed with {code}, the core says {want}")
                continue
            flows = _read_results(service, answers, path, ids[path])
            if want.flows != flows:
                wrong.append(f"{path.name}: {flows} flows served, the core found {want}")
    assert not answers.server_errors, answers.server_errors
    assert not answers.bad_problems, answers.bad_problems
    assert not wrong, wrong
    # every file has its outcome (on the corpus of 2026-12: all 512 analysed, the tcpdump
    # suite's broken files with warnings)
    assert sum(outcomes.values()) == len(files) and outcomes["done"] > 0, outcomes
