"""Progress of a running analysis: the analysis child reports the bytes of the file read so far
moving between 0 and the total while the capture is read (not 0 → total at the end), then each
stage; the API shows those steps as they come, in order."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.services import analysis_child
from tcplens.settings import Settings
from tests.api.service_fixtures import repeated_capture, sign_up
from tests.capture.shared_captures import LAB, require

STAGES = ["reading", "analysing", "diagnosing", "storing"]


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    # The real in-process worker takes the job from the queue, as under `tcplens serve`.
    settings = settings.model_copy(
        update={"in_process_worker": True, "login_attempts_per_minute": 1000.0}
    )
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        yield client


def test_progress_moves_through_the_bytes_and_the_stages(client: TestClient) -> None:
    require(LAB)
    actor = sign_up(client)
    # ~30 MB: the reader reports every 8 MiB, so there are steps strictly between 0 and the end.
    data = repeated_capture(LAB / "rcvbuf_locked_download.pcap", 36, b"progress")
    response = client.post(
        "/api/v1/captures?filename=big.pcap", content=data, headers=actor.headers()
    )
    assert response.status_code == 202, response.text
    capture_id = response.json()["capture"]["id"]

    seen: list[tuple[str, str | None, int, int]] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        capture = client.get(f"/api/v1/captures/{capture_id}").json()
        progress = capture["progress"]
        state = (
            capture["status"],
            progress["stage"],
            progress["bytes_done"],
            progress["bytes_total"],
        )
        if not seen or seen[-1] != state:
            seen.append(state)
        if capture["status"] in ("done", "failed"):
            break
        time.sleep(0.01)
    assert seen[-1] == ("done", None, len(data), len(data)), seen

    running = [(stage, done) for status, stage, done, _ in seen if status == "running"]
    assert all(total == len(data) for *_, total in seen)
    # Bytes read never go backwards. Which of the child's steps a poll catches depends on the
    # machine's speed (the whole read takes a few ms): that the steps exist is the next test's.
    read = [done for stage, done in running if stage == "reading"]
    assert all(0 <= done <= len(data) for done in read), seen
    assert read == sorted(read)
    # Stages only move forward (how many of them a poll catches depends on the machine's speed).
    order = [STAGES.index(stage) for stage, _ in running if stage is not None]
    assert order == sorted(order), seen
    # The child reported every stage: each has its time in the capture's timings.
    timings = client.get(f"/api/v1/captures/{capture_id}").json()["timings_s"]
    steps = {"queued", "child_startup", "reading", "analysing", "diagnosing", "writing_series"}
    assert steps <= set(timings), timings
    assert all(seconds >= 0 for seconds in timings.values())


def test_the_child_reports_byte_steps_inside_the_file_then_each_stage(tmp_path: Path) -> None:
    """What the worker forwards to the API: the real analysis child in its own process, its
    messages read from the pipe as the worker reads them."""
    require(LAB)
    data = repeated_capture(LAB / "rcvbuf_locked_download.pcap", 36, b"progress")
    capture = tmp_path / "big.pcap"
    capture.write_bytes(data)
    context = multiprocessing.get_context("forkserver")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(
        target=analysis_child.run,
        args=(str(capture), str(tmp_path / "out"), 4 << 30, sender, "capture", "results"),
    )
    (tmp_path / "out").mkdir()
    child.start()
    sender.close()
    messages = []
    while True:
        try:
            messages.append(receiver.recv())
        except EOFError:
            break
    child.join(60)
    assert child.exitcode == 0
    stages = [stage for stage, *_ in messages]
    # each stage once, in order (the reading stage's byte steps repeat its name)
    assert list(dict.fromkeys(stages)) == [*STAGES, "finished"], stages
    read = [(done, total) for stage, done, total, _ in messages if stage == "reading"]
    assert all(total == len(data) for done, total in read[1:]), read
    steps = [done for done, _ in read[1:]]
    assert any(0 < done < len(data) for done in steps), read
    assert steps == sorted(steps) and steps[-1] == len(data), read
    stamps = [stamp for *_, stamp in messages]
    assert stamps == sorted(stamps)
