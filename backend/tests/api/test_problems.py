from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi import APIRouter
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens import errors
from tcplens.main import create_app
from tcplens.settings import Settings


class CaptureNotFound(errors.NotFound):
    code = "capture_not_found"


@pytest.fixture
def client_with_failing_routes(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    app = create_app(settings, engine)
    router = APIRouter()

    @router.get("/api/v1/test/missing")
    def missing() -> None:
        raise CaptureNotFound("no capture 42", capture_id=42)

    @router.get("/api/v1/test/crash")
    def crash() -> None:
        raise RuntimeError("password=hunter2 leaked in an internal message")

    @router.get("/api/v1/test/items/{item_id}")
    def item(item_id: int) -> dict[str, int]:
        return {"id": item_id}

    # Before the SPA catch-all, which was added last by create_app.
    app.router.routes[0:0] = router.routes
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def test_domain_error_becomes_problem_json_with_its_stable_code(
    client_with_failing_routes: TestClient,
) -> None:
    response = client_with_failing_routes.get("/api/v1/test/missing")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json() == {
        "type": "urn:tcplens:problem:capture_not_found",
        "title": "Not found",
        "status": 404,
        "detail": "no capture 42",
        "code": "capture_not_found",
        "instance": "/api/v1/test/missing",
        "capture_id": 42,
    }


def test_unexpected_error_is_a_500_problem_without_internals(
    client_with_failing_routes: TestClient,
) -> None:
    response = client_with_failing_routes.get("/api/v1/test/crash")
    assert response.status_code == 500
    assert response.json()["code"] == "internal_error"
    assert "hunter2" not in response.text
    assert "Traceback" not in response.text


def test_validation_error_names_the_field(client_with_failing_routes: TestClient) -> None:
    response = client_with_failing_routes.get("/api/v1/test/items/not-a-number")
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "invalid_input"
    assert body["errors"][0]["location"] == ["path", "item_id"]


def test_unknown_api_path_is_a_404_problem_not_the_spa(client: TestClient) -> None:
    response = client.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


def test_wrong_method_is_a_405_problem(client: TestClient) -> None:
    response = client.post("/api/v1/health")
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"
