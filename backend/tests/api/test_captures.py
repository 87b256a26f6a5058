"""Uploads (raw and multipart, streamed), their refusals, listing, reading and deleting."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, text

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import Actor, sign_up, tiny_pcap


@pytest.fixture
def client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    limits = {"max_upload_bytes": 64 * 1024, "login_attempts_per_minute": 1000.0}
    app = create_app(settings.model_copy(update=limits), engine)
    with TestClient(app, base_url="https://testserver") as client:
        yield client


@pytest.fixture
def actor(client: TestClient) -> Actor:
    return sign_up(client)


def _upload_raw(actor: Actor, data: bytes, name: str = "trace.pcap") -> httpx2.Response:
    return actor.client.post(
        f"/api/v1/captures?filename={name}",
        content=data,
        headers={**actor.headers(), "Content-Type": "application/octet-stream"},
    )


def test_raw_upload_answers_202_with_location_capture_and_queued_job(
    actor: Actor, engine: Engine
) -> None:
    data = tiny_pcap(b"raw")
    response = _upload_raw(actor, data)
    assert response.status_code == 202, response.text
    body = response.json()
    capture = body["capture"]
    assert response.headers["location"] == f"/api/v1/captures/{capture['id']}"
    assert capture["sha256"] == hashlib.sha256(data).hexdigest()
    assert capture["size_bytes"] == len(data)
    assert capture["format"] == "pcap" and capture["status"] == "queued"
    assert capture["filename"] == "trace.pcap"
    assert body["created"] is True and body["job"]["status"] == "todo"
    # the job row was written in the same transaction, for this capture
    with engine.connect() as connection:
        args = connection.execute(
            text("SELECT args FROM procrastinate_jobs WHERE id = :id"), {"id": body["job"]["id"]}
        ).scalar_one()
    assert args == {"capture_id": capture["id"]}


def test_multipart_upload_takes_the_file_field_and_its_name(actor: Actor) -> None:
    data = tiny_pcap(b"multipart")
    response = actor.client.post(
        "/api/v1/captures",
        files={"file": ("C:\\Users\\me\\slow.pcap", data, "application/vnd.tcpdump.pcap")},
        data={"note": "ignored"},
        headers=actor.headers(),
    )
    assert response.status_code == 202, response.text
    capture = response.json()["capture"]
    assert capture["filename"] == "slow.pcap"
    assert capture["sha256"] == hashlib.sha256(data).hexdigest()
    fetched = actor.client.get(f"/api/v1/captures/{capture['id']}/file")
    assert fetched.status_code == 200 and fetched.content == data


def test_same_bytes_in_the_same_workspace_return_the_existing_capture(actor: Actor) -> None:
    data = tiny_pcap(b"twice")
    first = _upload_raw(actor, data)
    second = _upload_raw(actor, data, name="renamed.pcap")
    assert first.status_code == 202 and second.status_code == 200
    assert second.json()["created"] is False
    assert second.json()["capture"]["id"] == first.json()["capture"]["id"]


def test_not_a_capture_is_415_naming_the_supported_formats(actor: Actor) -> None:
    response = _upload_raw(actor, b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
    assert response.status_code == 415
    body = response.json()
    assert body["code"] == "unsupported_format"
    assert "pcapng" in body["detail"] and "pcap" in body["supported_formats"]


def test_oversized_upload_is_413_by_header_and_while_streaming(actor: Actor) -> None:
    big = tiny_pcap(b"x" * 1000) + b"\x00" * (200 * 1024)
    by_header = _upload_raw(actor, big)
    assert by_header.status_code == 413 and by_header.json()["code"] == "upload_too_large"

    def chunked() -> Iterator[bytes]:  # no Content-Length: only counting can catch it
        yield big[:1000]
        for start in range(1000, len(big), 8192):
            yield big[start : start + 8192]

    streamed = actor.client.post("/api/v1/captures", content=chunked(), headers=actor.headers())
    assert streamed.status_code == 413


def test_malformed_uploads_are_4xx_never_500(actor: Actor) -> None:
    cases = [
        _upload_raw(actor, b""),
        _upload_raw(actor, b"\xd4\xc3"),  # shorter than any magic
        actor.client.post(
            "/api/v1/captures",
            content=b'--xyz\r\nContent-Disposition: form-data; name="other"\r\n\r\nhi\r\n--xyz--\r\n',
            headers={**actor.headers(), "Content-Type": "multipart/form-data; boundary=xyz"},
        ),
        actor.client.post(
            "/api/v1/captures",
            content=b"garbage",
            headers={**actor.headers(), "Content-Type": "multipart/form-data"},
        ),
        actor.client.post(
            "/api/v1/captures",
            content=b'--b\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n'
            + tiny_pcap(b"cut"),
            headers={**actor.headers(), "Content-Type": "multipart/form-data; boundary=b"},
        ),
    ]
    assert [r.status_code for r in cases] == [422, 415, 422, 422, 422]
    assert all(r.headers["content-type"] == "application/problem+json" for r in cases)


def test_failed_uploads_leave_no_files(actor: Actor, settings: Settings) -> None:
    _upload_raw(actor, b"not a capture at all")
    blobs = Path(settings.blob_dir)
    assert not any(p.is_file() for p in blobs.rglob("*")) if blobs.exists() else True


def _ids(actor: Actor, query: str) -> list[str]:
    response = actor.client.get(f"/api/v1/captures{query}")
    assert response.status_code == 200, response.text
    return [c["id"] for c in response.json()["items"]]


def test_listing_is_newest_first_in_pages_with_the_total(actor: Actor) -> None:
    ids = [
        _upload_raw(actor, tiny_pcap(f"n{i}".encode())).json()["capture"]["id"] for i in range(5)
    ]
    pages = [actor.client.get(f"/api/v1/captures?limit=2&offset={o}").json() for o in (0, 2, 4)]
    assert [c["id"] for p in pages for c in p["items"]] == ids[::-1]
    assert [(p["total"], p["offset"], p["limit"]) for p in pages] == [
        (5, 0, 2),
        (5, 2, 2),
        (5, 4, 2),
    ]
    assert actor.client.get("/api/v1/captures?offset=5").json()["items"] == []


def test_listing_sorts_by_each_column_both_ways(actor: Actor) -> None:
    # sizes 24 + 16-byte record header + payload; names chosen so no two orders coincide
    made = {
        name: _upload_raw(actor, tiny_pcap(b"p" * size), name).json()["capture"]["id"]
        for name, size in (("b.pcap", 30), ("C.pcap", 10), ("a.pcap", 20))
    }
    by_name = [made["a.pcap"], made["b.pcap"], made["C.pcap"]]  # case-insensitive
    assert _ids(actor, "?sort=filename&order=asc") == by_name
    assert _ids(actor, "?sort=filename&order=desc") == by_name[::-1]
    assert _ids(actor, "?sort=size&order=asc") == [made["C.pcap"], made["a.pcap"], made["b.pcap"]]
    assert _ids(actor, "?sort=size&order=desc") == [made["b.pcap"], made["a.pcap"], made["C.pcap"]]
    assert _ids(actor, "?sort=created&order=asc") == list(made.values())
    # all queued, none with a finding: the ties fall back to newest first, in either order
    newest_first = list(made.values())[::-1]
    for sort in ("status", "top_finding"):
        for order in ("asc", "desc"):
            assert _ids(actor, f"?sort={sort}&order={order}") == newest_first


def test_listing_searches_the_file_name(actor: Actor) -> None:
    slow = _upload_raw(actor, tiny_pcap(b"1"), "Slow_Upload-2026.pcap").json()["capture"]["id"]
    _upload_raw(actor, tiny_pcap(b"2"), "fast.pcapng")
    _upload_raw(actor, tiny_pcap(b"3"), "slowXupload.pcap")
    assert _ids(actor, "?q=slow_upload") == [slow]  # any case; '_' is not a wildcard
    assert _ids(actor, "?q=%20%20slow_UPLOAD%20") == [slow]  # surrounding blanks ignored
    page = actor.client.get("/api/v1/captures?q=pcap&limit=1").json()
    assert page["total"] == 3 and len(page["items"]) == 1
    assert _ids(actor, "?q=nothing-like-it") == []


def _delete_many(actor: Actor, ids: list[str]) -> httpx2.Response:
    return actor.client.post("/api/v1/captures/delete", json={"ids": ids}, headers=actor.headers())


def test_bulk_delete_removes_every_capture_and_its_files(actor: Actor, settings: Settings) -> None:
    ids = [
        _upload_raw(actor, tiny_pcap(f"d{i}".encode())).json()["capture"]["id"] for i in range(3)
    ]
    assert _delete_many(actor, ids[:2]).status_code == 204
    assert _ids(actor, "") == ids[2:]
    for gone in ids[:2]:
        assert not (Path(settings.blob_dir) / "captures" / gone).exists()


def test_bulk_delete_is_all_or_nothing(client: TestClient, actor: Actor) -> None:
    mine = _upload_raw(actor, tiny_pcap(b"mine")).json()["capture"]["id"]
    other = sign_up(TestClient(client.app, base_url="https://testserver"))
    theirs = _upload_raw(other, tiny_pcap(b"theirs")).json()["capture"]["id"]
    # another tenant's capture is not found from here: nothing is deleted, not even one's own
    refused = _delete_many(actor, [mine, theirs])
    assert refused.status_code == 404 and refused.json()["code"] == "capture_not_found"
    assert _ids(actor, "") == [mine] and _ids(other, "") == [theirs]
    bodies: list[dict[str, list[str]]] = [{"ids": []}, {"ids": [mine] * 201}, {"ids": ["x"]}, {}]
    for body in bodies:
        bad = actor.client.post("/api/v1/captures/delete", json=body, headers=actor.headers())
        assert bad.status_code == 422 and bad.json()["code"] == "invalid_input", body
    assert _ids(actor, "") == [mine]


def test_delete_removes_capture_and_files(actor: Actor, settings: Settings) -> None:
    capture_id = _upload_raw(actor, tiny_pcap(b"delete me")).json()["capture"]["id"]
    assert (Path(settings.blob_dir) / "captures" / capture_id / "original").exists()
    assert (
        actor.client.delete(f"/api/v1/captures/{capture_id}", headers=actor.headers()).status_code
        == 204
    )
    assert actor.client.get(f"/api/v1/captures/{capture_id}").status_code == 404
    assert not (Path(settings.blob_dir) / "captures" / capture_id).exists()


def test_results_before_the_analysis_is_done_are_409(actor: Actor) -> None:
    capture_id = _upload_raw(actor, tiny_pcap(b"pending")).json()["capture"]["id"]
    response = actor.client.get(f"/api/v1/captures/{capture_id}/flows")
    assert response.status_code == 409 and response.json()["code"] == "analysis_not_ready"


def test_upload_is_rate_limited(settings: Settings, engine: Engine) -> None:
    limits = {"uploads_per_minute": 2.0, "login_attempts_per_minute": 1000.0}
    with TestClient(
        create_app(settings.model_copy(update=limits), engine), base_url="https://testserver"
    ) as client:
        actor = sign_up(client)
        codes = [
            _upload_raw(actor, tiny_pcap(str(uuid.uuid4()).encode())).status_code for _ in range(3)
        ]
    assert codes == [202, 202, 429]
