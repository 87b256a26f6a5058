"""What a killed ``serve`` or a lost database leaves in the blob store is removed when the service
starts: partial uploads (``.partial-*``) and capture folders without a capture row, once older
than the grace period; what is younger, or has its row, stays."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import boto3
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.services.leftovers import LEFTOVER_GRACE_S, Swept, sweep_leftovers
from tcplens.settings import Settings
from tests.api.service_fixtures import sign_up, tiny_pcap
from tests.storage.s3_server import s3_endpoint  # noqa: F401  (fixture)


def _age(path: Path, seconds: float) -> None:
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        stamp = time.time() - seconds
        os.utime(item, (stamp, stamp))


def _file(path: Path, data: bytes = b"x" * 100) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_start_sweeps_partial_uploads_and_files_without_a_capture(
    settings: Settings, engine: Engine
) -> None:
    old = LEFTOVER_GRACE_S + 60
    with TestClient(create_app(settings, engine), base_url="https://testserver") as client:
        alice = sign_up(client)
        upload = client.post(
            "/api/v1/captures?filename=kept.pcap",
            content=tiny_pcap(uuid.uuid4().bytes),
            headers=alice.headers(),
        )
        kept_id = upload.json()["capture"]["id"]
    captures = settings.blob_dir / "captures"
    kept = captures / kept_id
    _age(kept, old)  # old, but it has its row
    orphan = captures / str(uuid.uuid4())  # an upload whose row was never written
    _file(orphan / "original")
    _age(orphan, old)
    killed = _file(captures / str(uuid.uuid4()) / ".partial-abc123")  # serve killed mid-upload
    _age(killed, old)
    in_progress = _file(captures / str(uuid.uuid4()) / ".partial-def456")  # another API process
    recent_orphan = captures / str(uuid.uuid4())  # its row may be being written right now
    _file(recent_orphan / "original")
    foreign = _file(captures / "not-a-capture" / "readme")  # not a folder the service made
    _age(foreign, old)

    with TestClient(create_app(settings, engine), base_url="https://testserver"):
        pass  # start-up sweeps

    left = sorted(str(p.relative_to(captures)) for p in captures.rglob("*") if p.is_file())
    assert left == sorted(
        [
            f"{kept_id}/original",
            str(in_progress.relative_to(captures)),
            f"{recent_orphan.name}/original",
            "not-a-capture/readme",
        ]
    )
    # The killed upload's folder went with its partial file: no empty folder stays.
    assert not killed.parent.exists()
    assert not orphan.exists()


def test_the_sweep_on_s3_aborts_unfinished_multipart_uploads_and_removes_orphans(
    settings: Settings,
    engine: Engine,
    s3_endpoint: str,  # noqa: F811
) -> None:
    s3_settings = settings.model_copy(
        update={
            "storage_url": "s3://tcplens-leftovers/deploy",
            "s3_endpoint_url": s3_endpoint,
            "s3_access_key_id": "testing",
            "s3_secret_access_key": SecretStr("testing"),
        }
    )
    s3 = boto3.client(
        "s3",
        endpoint_url=s3_endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    with TestClient(create_app(s3_settings, engine), base_url="https://testserver") as client:
        alice = sign_up(client)
        upload = client.post(
            "/api/v1/captures?filename=kept.pcap",
            content=tiny_pcap(uuid.uuid4().bytes),
            headers=alice.headers(),
        )
        kept = f"deploy/captures/{upload.json()['capture']['id']}/original"
        orphan = f"deploy/captures/{uuid.uuid4()}/original"
        s3.put_object(Bucket="tcplens-leftovers", Key=orphan, Body=b"x" * 100)
        unfinished = s3.create_multipart_upload(
            Bucket="tcplens-leftovers", Key=f"deploy/captures/{uuid.uuid4()}/original"
        )["UploadId"]
        service = client.app.state.service  # type: ignore[attr-defined]

        # Younger than the grace period: the orphan stays. (moto dates every multipart upload
        # in 2010, so the unfinished one is old to any sweep.)
        assert sweep_leftovers(service).orphan_captures == 0
        assert s3.head_object(Bucket="tcplens-leftovers", Key=orphan)["ContentLength"] == 100
        # Later: the orphan goes, the capture's file stays.
        later = time.time() + LEFTOVER_GRACE_S + 60
        assert sweep_leftovers(service, now=later) == Swept(partial_writes=0, orphan_captures=1)
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="tcplens-leftovers").get("Contents", [])]
    assert keys == [kept]
    uploads = s3.list_multipart_uploads(Bucket="tcplens-leftovers").get("Uploads", [])
    assert unfinished not in [u["UploadId"] for u in uploads]
