from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.settings import Settings

INDEX = "<!doctype html><title>tcplens</title><div id=root></div>"


@pytest.fixture
def spa_client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    assert settings.spa_dir is not None
    (settings.spa_dir / "assets").mkdir(parents=True)
    (settings.spa_dir / "index.html").write_text(INDEX)
    (settings.spa_dir / "assets" / "index-abc123.js").write_text("console.log('tcplens')")
    (settings.spa_dir / "favicon.svg").write_text("<svg/>")
    (settings.spa_dir.parent / "secret.txt").write_text("outside the SPA")
    with TestClient(create_app(settings, engine)) as client:
        yield client


def test_root_serves_index_with_security_headers(spa_client: TestClient) -> None:
    response = spa_client.get("/")
    assert response.status_code == 200
    assert response.text == INDEX
    assert response.headers["cache-control"] == "no-cache"
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-content-type-options"] == "nosniff"


def test_client_side_routes_fall_back_to_index(spa_client: TestClient) -> None:
    response = spa_client.get("/captures/42/flows/3")
    assert response.status_code == 200
    assert response.text == INDEX


def test_hashed_assets_are_cached_forever_other_files_served_as_is(
    spa_client: TestClient,
) -> None:
    asset = spa_client.get("/assets/index-abc123.js")
    assert asset.text == "console.log('tcplens')"
    assert "immutable" in asset.headers["cache-control"]
    icon = spa_client.get("/favicon.svg")
    assert icon.text == "<svg/>"
    assert "immutable" not in icon.headers.get("cache-control", "")


def test_paths_outside_the_spa_directory_are_not_served(spa_client: TestClient) -> None:
    response = spa_client.get("/..%2fsecret.txt")
    assert "outside the SPA" not in response.text
    assert response.text == INDEX


def test_missing_build_is_a_clear_problem(client: TestClient) -> None:
    response = client.get("/")
    assert response.status_code == 404
    assert response.json()["code"] == "spa_not_built"
