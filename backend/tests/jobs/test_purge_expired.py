"""Expired (or idle) browser sessions and long-dead share links are deleted by a periodic maintenance task
that a real worker runs; live sessions and links (and recently dead links, still listed to their
owner) stay."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from croniter import croniter
from fastapi.testclient import TestClient
from sqlalchemy import Engine, select

from tcplens.db.accounts import BrowserSession
from tcplens.db.captures import ShareLink
from tcplens.db.engine import make_sessionmaker
from tcplens.jobs.queue import MAINTENANCE_QUEUE, PURGE_EXPIRED_TASK
from tcplens.main import create_app
from tcplens.services import tasks
from tcplens.services.context import build_context
from tcplens.settings import Settings
from tests.api.service_fixtures import sign_up, tiny_pcap


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        yield client


def test_purge_runs_every_ten_minutes_on_every_worker() -> None:
    app = tasks.worker_app("postgresql://unused/db")
    periodic = {p.periodic_id: p for p in app.periodic_registry.periodic_tasks.values()}
    purge = periodic["purge-expired"]
    assert purge.task.name == PURGE_EXPIRED_TASK and purge.task.queue == MAINTENANCE_QUEUE
    ticks = croniter(purge.cron, datetime(2026, 11, 22, 8, 11, 49, tzinfo=UTC))
    times = [ticks.get_next(datetime).strftime("%H:%M") for _ in range(3)]
    assert times == ["08:20", "08:30", "08:40"]


def test_the_worker_purges_expired_sessions_and_dead_share_links(
    client: TestClient, engine: Engine, settings: Settings, database_url: str
) -> None:
    actor = sign_up(client)
    upload = client.post(
        "/api/v1/captures?filename=a.pcap", content=tiny_pcap(b"purge"), headers=actor.headers()
    )
    capture_id = uuid.UUID(upload.json()["capture"]["id"])
    now = datetime.now(UTC)
    sessions = make_sessionmaker(engine)
    with sessions() as session:
        idle = timedelta(seconds=settings.session_idle_timeout_s)
        for name, expires, seen in [
            ("expired", now - timedelta(seconds=1), now),
            ("live", now + timedelta(hours=1), now - idle + timedelta(minutes=5)),
            ("idle", now + timedelta(hours=1), now - idle - timedelta(seconds=1)),
        ]:
            session.add(
                BrowserSession(
                    token_hash=f"{name}-{uuid.uuid4().hex}",
                    user_id=actor.user_id,
                    expires_at=expires,
                    last_seen_at=seen,
                )
            )
        links = {
            "expired 31 days ago": {"expires_at": now - timedelta(days=31)},
            "revoked 31 days ago": {"revoked_at": now - timedelta(days=31)},
            "expired yesterday": {"expires_at": now - timedelta(days=1)},
            "revoked yesterday": {"revoked_at": now - timedelta(days=1)},
            "live": {"expires_at": now + timedelta(days=1)},
            "never expires": {},
        }
        for name, when in links.items():
            session.add(
                ShareLink(
                    capture_id=capture_id, token_hash=f"{name}-{uuid.uuid4().hex}"[:64], **when
                )
            )
        session.commit()

    # A real worker (procrastinate, on the test database) runs the task and stops once idle.
    tasks.bind(build_context(settings, engine, sessions))
    app = tasks.worker_app(database_url)

    async def run() -> None:
        async with app.open_async():
            await app.configure_task(PURGE_EXPIRED_TASK).defer_async(timestamp=0)
            await app.run_worker_async(queues=[MAINTENANCE_QUEUE], wait=False)

    asyncio.run(run())

    with sessions() as session:
        left = session.scalars(
            select(BrowserSession.token_hash).where(BrowserSession.user_id == actor.user_id)
        ).all()
        kept = session.scalars(
            select(ShareLink.token_hash).where(ShareLink.capture_id == capture_id)
        ).all()
    # sign_up's own session is live too
    assert sorted(h.split("-")[0] for h in left if "-" in h) == ["live"]
    assert len(left) == 2
    assert sorted(h.rsplit("-", 1)[0] for h in kept) == sorted(
        ["expired yesterday", "revoked yesterday", "live", "never expires"]
    )
