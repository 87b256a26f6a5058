from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

import tcplens
from tcplens.db.engine import make_engine
from tcplens.main import create_app
from tcplens.settings import Settings


def test_health_reports_version_and_database(client: TestClient) -> None:
    response = client.get("/api/v1/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "version": tcplens.__version__, "database": "ok"}


def test_health_is_503_problem_when_database_does_not_answer(
    settings: Settings, tmp_path: Path
) -> None:
    # A Unix-socket directory where no server listens: connecting fails at once.
    dead = make_engine(f"postgresql+psycopg://postgres@/postgres?host={tmp_path}")
    with TestClient(create_app(settings, dead)) as client:
        response = client.get("/api/v1/health")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "service_unavailable"
    assert body["detail"] == "the database does not answer"
    assert body["database"] == "unavailable"
    assert "Traceback" not in response.text


def test_openapi_schema_is_served_under_api_v1(client: TestClient) -> None:
    schema = client.get("/api/v1/openapi.json").json()
    assert schema["info"]["version"] == tcplens.__version__
    assert "/api/v1/health" in schema["paths"]
    assert client.get("/api/v1/docs").status_code == 200
