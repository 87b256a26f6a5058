"""The storage quota of a workspace: 413 quota_exceeded before streaming, while streaming and
when the row is written; nothing past the quota is stored; usage on /workspaces/{id}/usage."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.services import captures
from tcplens.services.access import Viewer
from tcplens.services.storage_quota import QuotaExceeded
from tcplens.settings import Settings
from tests.api.service_fixtures import sign_up, tiny_pcap

QUOTA = 2000


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        data_dir=tmp_path / "data",
        spa_dir=tmp_path / "spa",
        in_process_worker=False,
        workspace_quota_bytes=QUOTA,
        uploads_per_minute=1000.0,
    )


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        yield client


def _capture(size: int) -> bytes:
    """A valid pcap of exactly ``size`` bytes (unique bytes each call)."""
    data = tiny_pcap(uuid.uuid4().bytes)
    return tiny_pcap(uuid.uuid4().bytes + b"x" * (size - len(data)))


def _stored(settings: Settings) -> list[str]:
    """Every file and folder under the blob store's captures/ (none may outlive a refusal)."""
    root = settings.blob_dir / "captures"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def _refused(response_status: int, body: dict[str, object], used: int) -> None:
    assert response_status == 413, body
    assert body["code"] == "quota_exceeded"
    assert body["used_bytes"] == used
    assert body["quota_bytes"] == QUOTA


def test_uploads_past_the_quota_are_refused_and_leave_nothing(
    client: TestClient, settings: Settings
) -> None:
    alice = sign_up(client)
    usage_url = f"/api/v1/workspaces/{alice.workspace_id}/usage"
    assert client.get(usage_url).json() == {"used_bytes": 0, "quota_bytes": QUOTA, "captures": 0}

    first = _capture(1200)
    accepted = client.post(
        "/api/v1/captures?filename=a.pcap", content=first, headers=alice.headers()
    )
    assert accepted.status_code == 202, accepted.text
    kept = _stored(settings)
    assert len(kept) == 2  # captures/<id>/ and its original
    assert client.get(usage_url).json() == {"used_bytes": 1200, "quota_bytes": QUOTA, "captures": 1}

    too_big = _capture(900)
    # Declared (Content-Length): refused before a byte is read.
    response = client.post(
        "/api/v1/captures?filename=b.pcap", content=too_big, headers=alice.headers()
    )
    _refused(response.status_code, response.json(), 1200)
    # Chunked, no Content-Length: refused while streaming.
    response = client.post(
        "/api/v1/captures?filename=b.pcap",
        content=iter([too_big[:500], too_big[500:]]),
        headers=alice.headers(),
    )
    _refused(response.status_code, response.json(), 1200)
    # Multipart, from a browser.
    response = client.post(
        "/api/v1/captures", files={"file": ("b.pcap", too_big)}, headers=alice.headers()
    )
    _refused(response.status_code, response.json(), 1200)
    # Not a capture at all: refused, and no empty folder left either.
    response = client.post(
        "/api/v1/captures?filename=c.txt", content=b"hello world " * 10, headers=alice.headers()
    )
    assert response.json()["code"] == "unsupported_format"
    assert _stored(settings) == kept

    # What fits exactly is taken; then the workspace is full.
    fits = client.post(
        "/api/v1/captures?filename=d.pcap", content=_capture(800), headers=alice.headers()
    )
    assert fits.status_code == 202, fits.text
    assert client.get(usage_url).json()["used_bytes"] == QUOTA
    full = client.post(
        "/api/v1/captures?filename=e.pcap",
        content=iter([_capture(100)]),
        headers=alice.headers(),
    )
    _refused(full.status_code, full.json(), QUOTA)

    # Another workspace has its own quota; its usage is not alice's to read.
    client.cookies.clear()
    bob = sign_up(client)
    response = client.post(
        "/api/v1/captures?filename=b.pcap", content=too_big, headers=bob.headers()
    )
    assert response.status_code == 202, response.text
    assert client.get(usage_url).json()["code"] == "workspace_not_found"


def test_two_uploads_racing_for_the_last_room_do_not_both_get_it(
    client: TestClient, settings: Settings
) -> None:
    """Both started when there was room for either (the usage each saw), only one fits: the
    second is refused when its row would be written, and its file is removed."""
    alice = sign_up(client)
    service = client.app.state.service  # type: ignore[attr-defined]
    viewer = Viewer(
        via="session",
        user_id=alice.user_id,
        workspace_ids=frozenset({alice.workspace_id}),
        default_workspace_id=alice.workspace_id,
    )
    seen = captures.room_for_upload(service, viewer, None, None)

    async def chunks(data: bytes) -> AsyncIterator[bytes]:
        yield data

    async def upload(data: bytes) -> captures.Received:
        return await captures.receive_upload(
            service, viewer, chunks(data), filename="r.pcap", workspace_id=None, usage=seen
        )

    first = asyncio.run(upload(_capture(1500)))
    assert first.created
    with pytest.raises(QuotaExceeded) as refused:
        asyncio.run(upload(_capture(1500)))
    assert refused.value.extra == {"used_bytes": 1500, "quota_bytes": QUOTA}
    assert _stored(settings) == [str(first.capture.id), f"{first.capture.id}/original"]
