"""The whole service on an S3-compatible store (moto on loopback), chosen by settings alone:
upload, analysis, series, the original file, and deletion of every object."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import boto3
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.services import analysis
from tcplens.settings import Settings
from tests.api.service_fixtures import sign_up
from tests.capture.shared_captures import LAB, require
from tests.storage.s3_server import s3_endpoint  # noqa: F401  (fixture)

BUCKET = "tcplens-service-test"


@pytest.fixture
def client(settings: Settings, engine: Engine, s3_endpoint: str) -> Iterator[TestClient]:  # noqa: F811
    s3 = {
        "storage_url": f"s3://{BUCKET}/deploy",
        "s3_endpoint_url": s3_endpoint,
        "s3_access_key_id": "testing",
        "s3_secret_access_key": SecretStr("testing"),
        "login_attempts_per_minute": 1000.0,
    }
    with TestClient(
        create_app(settings.model_copy(update=s3), engine), base_url="https://testserver"
    ) as client:
        yield client


def _objects(endpoint: str, prefix: str) -> list[str]:
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])]


def test_service_runs_on_s3(client: TestClient, s3_endpoint: str, settings: Settings) -> None:  # noqa: F811
    require(LAB)
    actor = sign_up(client)
    data = (LAB / "zero_window_slow_reader.pcap").read_bytes()
    response = actor.client.post(
        "/api/v1/captures?filename=zw.pcap", content=data, headers=actor.headers()
    )
    assert response.status_code == 202
    capture_id = response.json()["capture"]["id"]
    analysis.analyze(client.app.state.service, uuid.UUID(capture_id))  # type: ignore[attr-defined]
    assert actor.client.get(f"/api/v1/captures/{capture_id}").json()["status"] == "done"

    keys = _objects(s3_endpoint, f"deploy/captures/{capture_id}/")
    assert f"deploy/captures/{capture_id}/original" in keys
    assert any(k.endswith("/series.arrow") for k in keys)
    # nothing was written to the local blob directory
    assert not settings.blob_dir.exists() or not any(settings.blob_dir.rglob("*.arrow"))

    assert actor.client.get(f"/api/v1/captures/{capture_id}/file").content == data
    series = actor.client.get(
        f"/api/v1/captures/{capture_id}/flows/1/series?direction=client_to_server"
    ).json()
    assert series["points_in_range"] > 0

    assert (
        actor.client.delete(f"/api/v1/captures/{capture_id}", headers=actor.headers()).status_code
        == 204
    )
    assert _objects(s3_endpoint, f"deploy/captures/{capture_id}/") == []
