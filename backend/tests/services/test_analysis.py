"""The analysis job end to end: upload a lab capture, analyse it, read flows, findings and series
through the API; re-running is idempotent; an unreadable capture fails with words."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterator

import pyarrow as pa
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, func, select

from tcplens.db.captures import Flow
from tcplens.main import create_app
from tcplens.services import analysis
from tcplens.settings import Settings
from tcplens.tcp.model import RETRANSMISSION
from tests.api.service_fixtures import Actor, sign_up
from tests.capture.shared_captures import LAB, require


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    app = create_app(settings.model_copy(update={"login_attempts_per_minute": 1000.0}), engine)
    with TestClient(app, base_url="https://testserver") as client:
        yield client


def _upload(actor: Actor, data: bytes, name: str) -> str:
    response = actor.client.post(
        f"/api/v1/captures?filename={name}", content=data, headers=actor.headers()
    )
    assert response.status_code == 202, response.text
    return str(response.json()["capture"]["id"])


def test_lab_capture_is_analysed_and_served(client: TestClient, engine: Engine) -> None:
    require(LAB)
    actor = sign_up(client)
    capture_id = _upload(actor, (LAB / "lossy_download.pcap").read_bytes(), "lossy.pcap")
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]

    capture = actor.client.get(f"/api/v1/captures/{capture_id}").json()
    assert capture["status"] == "done", capture
    assert capture["facts"]["packets"] == 6567 and capture["facts"]["flows"] == 1
    assert capture["progress"]["bytes_done"] == capture["size_bytes"]

    flows = actor.client.get(f"/api/v1/captures/{capture_id}/flows?sort=throughput&order=desc")
    flow = flows.json()["items"][0]
    assert flow["client"] == "10.77.0.1:49628" and flow["server"] == "10.77.0.2:80"
    assert flow["summary"]["bytes"]["server_to_client"] == 5_000_044
    assert flow["retransmissions"] == 67  # every re-sent segment (tcp/resent.py)
    assert flow["throughput_bps"] == pytest.approx(8 * (5_000_044 + 67) / 1.639441, rel=1e-6)
    assert actor.client.get(f"/api/v1/captures/{capture_id}/flows/1").json()["id"] == 1
    assert actor.client.get(f"/api/v1/captures/{capture_id}/flows/99").status_code == 404
    assert actor.client.get(f"/api/v1/captures/{capture_id}/findings").status_code == 200

    url = f"/api/v1/captures/{capture_id}/flows/1/series?direction=server_to_client"
    full = actor.client.get(url + "&max_points=100000").json()
    reduced = actor.client.get(url + "&max_points=400").json()
    assert not full["reduced"] and full["returned_points"] == full["points_in_range"]
    assert reduced["reduced"] and reduced["points_in_range"] == full["points_in_range"]
    assert reduced["returned_points"] < full["returned_points"] // 5
    retransmitted = [e & RETRANSMISSION for e in full["columns"]["events"]]
    kept = [e & RETRANSMISSION for e in reduced["columns"]["events"]]
    assert sum(map(bool, retransmitted)) == sum(map(bool, kept)) > 0
    assert max(reduced["columns"]["seq"]) == max(full["columns"]["seq"])

    arrow = actor.client.get(
        url + "&max_points=400", headers={"Accept": "application/vnd.apache.arrow.stream"}
    )
    assert arrow.headers["content-type"] == "application/vnd.apache.arrow.stream"
    table = pa.ipc.open_stream(io.BytesIO(arrow.content)).read_all()
    assert table.num_rows == reduced["returned_points"]
    assert table.column("seq").to_pylist() == reduced["columns"]["seq"]

    window = actor.client.get(url + "&from=0.5&to=0.6").json()
    times = window["columns"]["time_s"]
    assert times and min(times) >= 0.5 and max(times) <= 0.6

    # running the job again (a retried job) leaves one result, not two
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    with engine.connect() as connection:
        count = connection.execute(
            select(func.count()).select_from(Flow).where(Flow.capture_id == uuid.UUID(capture_id))
        ).scalar_one()
    assert count == 1


def test_unreadable_capture_fails_with_words(client: TestClient) -> None:
    actor = sign_up(client)
    # pcap magic, then a header that cannot be a pcap header (snaplen/link type nonsense, cut)
    capture_id = _upload(actor, b"\xd4\xc3\xb2\xa1" + b"\xff" * 10, "broken.pcap")
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    capture = actor.client.get(f"/api/v1/captures/{capture_id}").json()
    assert capture["status"] == "failed"
    assert capture["error"]["code"] == "unreadable_capture"
    assert len(capture["error"]["message"]) > 10
    flows = actor.client.get(f"/api/v1/captures/{capture_id}/flows")
    assert flows.status_code == 409


def test_series_answers_304_to_a_matching_etag(client: TestClient) -> None:
    require(LAB)
    actor = sign_up(client)
    capture_id = _upload(actor, (LAB / "nagle_delack.pcap").read_bytes(), "nagle.pcap")
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    url = f"/api/v1/captures/{capture_id}/flows/1/series?max_points=50"
    first = actor.client.get(url)
    etag = first.headers["etag"]
    again = actor.client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    other = actor.client.get(url + "&from=0.1", headers={"If-None-Match": etag})
    assert other.status_code == 200
    # the ETag does not bypass authorisation
    stranger = sign_up(client)
    assert stranger.client.get(url, headers={"If-None-Match": etag}).status_code == 404


def test_a_capture_whose_job_died_for_good_is_marked_failed(
    client: TestClient, engine: Engine
) -> None:
    from sqlalchemy import text

    actor = sign_up(client)
    data = b"\xd4\xc3\xb2\xa1" + uuid.uuid4().bytes
    response = actor.client.post(
        "/api/v1/captures?filename=d.pcap", content=data, headers=actor.headers()
    )
    capture_id, job_id = response.json()["capture"]["id"], response.json()["job"]["id"]
    service = client.app.state.service  # type: ignore[attr-defined]
    assert analysis.fail_captures_of_dead_jobs(service) == 0  # a waiting job is not dead
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE procrastinate_jobs SET status = 'failed' WHERE id = :id"), {"id": job_id}
        )
    assert analysis.fail_captures_of_dead_jobs(service) >= 1
    capture = actor.client.get(f"/api/v1/captures/{capture_id}").json()
    assert capture["status"] == "failed"
    assert capture["error"]["code"] == "analysis_job_failed"


def test_findings_are_stored_in_order_with_time_lost_per_flow(client: TestClient) -> None:
    require(LAB)
    actor = sign_up(client)
    capture_id = _upload(
        actor, (LAB / "zero_window_slow_reader.pcap").read_bytes(), "slow-reader.pcap"
    )
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    findings = actor.client.get(f"/api/v1/captures/{capture_id}/findings").json()
    assert findings, "the slow reader capture has findings"
    first = findings[0]
    assert first["rank"] == 1
    assert first["factor"] == "receiver_app" and first["severity"] == "high"
    assert first["flows"] == [1] and first["title"] and first["fix"]
    flow = actor.client.get(f"/api/v1/captures/{capture_id}/flows/1").json()
    assert flow["limiting_factor"] == "receiver_app"
    # a flow's time lost is the sum of the time lost of the findings naming only it
    expected = sum(f["time_lost_s"] or 0.0 for f in findings if f["flows"] == [1])
    assert flow["time_lost_s"] == pytest.approx(expected)
    by_loss = actor.client.get(f"/api/v1/captures/{capture_id}/flows?sort=time_lost&order=desc")
    assert by_loss.json()["items"][0]["id"] == 1

    # The list of captures (and the capture itself) names the top finding; a capture still
    # waiting for its analysis has none.
    waiting = _upload(actor, (LAB / "stop_and_wait_app.pcap").read_bytes(), "waiting.pcap")
    listed = {c["id"]: c for c in actor.client.get("/api/v1/captures").json()["items"]}
    top = {k: first[k] for k in ("code", "severity", "factor", "title", "time_lost_s")}
    assert listed[capture_id]["top_finding"] == top
    assert actor.client.get(f"/api/v1/captures/{capture_id}").json()["top_finding"] == top
    assert listed[waiting]["top_finding"] is None


def test_maintenance_forgets_its_own_old_runs(client: TestClient, engine: Engine) -> None:
    import asyncio
    from types import SimpleNamespace

    from sqlalchemy import text

    from tcplens.jobs.queue import MAINTENANCE_QUEUE, RETRY_STALLED_TASK
    from tcplens.services import tasks

    with engine.begin() as connection:
        old = connection.execute(
            text(
                "INSERT INTO procrastinate_jobs (queue_name, task_name, args, status)"
                " VALUES (:queue, :task, '{}', 'succeeded') RETURNING id"
            ),
            {"queue": MAINTENANCE_QUEUE, "task": RETRY_STALLED_TASK},
        ).scalar_one()
        connection.execute(
            text(
                "INSERT INTO procrastinate_events (job_id, type, at)"
                " VALUES (:id, 'succeeded', now() - interval '2 hours')"
            ),
            {"id": old},
        )

    async def run_maintenance() -> None:
        tasks.bind(client.app.state.service)  # type: ignore[attr-defined]
        app = tasks.worker_app(engine.url.render_as_string(hide_password=False))
        async with app.open_async():
            await tasks.retry_stalled_jobs(SimpleNamespace(app=app), 0)  # type: ignore[arg-type]

    asyncio.run(run_maintenance())
    with engine.connect() as connection:
        left = connection.execute(
            text("SELECT count(*) FROM procrastinate_jobs WHERE id = :id"), {"id": old}
        ).scalar_one()
    assert left == 0


def test_every_stored_file_is_readable_by_the_service_only(
    client: TestClient, settings: Settings
) -> None:
    """Originals and the analysis's series files alike: mode 0600 (captures hold payloads)."""
    require(LAB)
    actor = sign_up(client)
    capture_id = _upload(actor, (LAB / "lossy_download.pcap").read_bytes(), "modes.pcap")
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    folder = settings.blob_dir / "captures" / capture_id
    modes = {
        str(p.relative_to(folder)): oct(p.stat().st_mode & 0o777)
        for p in folder.rglob("*")
        if p.is_file()
    }
    version = analysis.ANALYZER_VERSION
    assert modes == {
        "original": "0o600",
        f"results/{version}/series.arrow": "0o600",  # (no overview: its flow is short)
    }
