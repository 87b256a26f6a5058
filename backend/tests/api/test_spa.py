from __future__ import annotations

import gzip
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.api import spa
from tcplens.main import create_app
from tcplens.settings import Settings

INDEX = "<!doctype html><title>tcplens</title><div id=root></div>"
WASM = b"\x00asm\x01\x00\x00\x00" + bytes(100)


@pytest.fixture
def spa_client(settings: Settings, engine: Engine) -> Iterator[TestClient]:
    assert settings.spa_dir is not None
    (settings.spa_dir / "assets").mkdir(parents=True)
    (settings.spa_dir / "index.html").write_text(INDEX)
    (settings.spa_dir / "assets" / "index-abc123.js").write_text("console.log('tcplens')")
    (settings.spa_dir / "favicon.svg").write_text("<svg/>")
    (settings.spa_dir / "assets" / "wiregasm-worker-abc123.js").write_text("importScripts()")
    wiregasm = settings.spa_dir / "wiregasm" / "1.9.1"
    wiregasm.mkdir(parents=True)
    (wiregasm / "wiregasm.wasm.gz").write_bytes(gzip.compress(WASM))
    (wiregasm / "wiregasm.js").write_text("var loadWiregasm;")
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


def test_wiregasm_module_is_sent_precompressed_and_cached_forever(spa_client: TestClient) -> None:
    response = spa_client.get("/wiregasm/1.9.1/wiregasm.wasm")
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["content-type"] == "application/wasm"
    assert "immutable" in response.headers["cache-control"]
    assert response.content == WASM  # the client decodes Content-Encoding
    script = spa_client.get("/wiregasm/1.9.1/wiregasm.js")
    assert script.text == "var loadWiregasm;"
    assert "immutable" in script.headers["cache-control"]
    csp = script.headers["content-security-policy"]
    assert "'wasm-unsafe-eval'" in csp and "worker-src 'self' blob:" in csp
    assert "'unsafe-eval'" not in csp.replace("'wasm-unsafe-eval'", "")


def test_a_missing_wiregasm_file_falls_back_to_index(spa_client: TestClient) -> None:
    assert spa_client.get("/wiregasm/1.9.1/wiregasm.data").text == INDEX


def test_only_the_wiregasm_worker_may_evaluate_code(spa_client: TestClient) -> None:
    worker = spa_client.get("/assets/wiregasm-worker-abc123.js")
    assert "'unsafe-eval'" in worker.headers["content-security-policy"].replace(";", " ").split()
    assert "immutable" in worker.headers["cache-control"]
    page = spa_client.get("/captures/1/flows/2").headers["content-security-policy"]
    app = spa_client.get("/assets/index-abc123.js").headers["content-security-policy"]
    for policy in (page, app):
        assert "'unsafe-eval'" not in policy.replace(";", " ").split()


@pytest.mark.parametrize("path", ["/a%00b", "/" + "x" * 5000, "/a" * 3000, "/assets/%00.wasm"])
def test_paths_no_file_system_can_name_fall_back_to_index(
    spa_client: TestClient, path: str
) -> None:
    # Path.resolve() raised ValueError (NUL) or OSError (ENAMETOOLONG): a 500 for any visitor.
    response = spa_client.get(path)
    assert response.status_code == 200
    assert response.text == INDEX


def test_the_built_spa_ships_no_source_maps() -> None:
    """The build the server ships (``make spa``) has no ``.map`` files and no script points to
    one (``//# sourceMappingURL=``)."""
    dist = spa.default_spa_dir()
    if not (dist / "index.html").is_file():
        pytest.skip("the SPA is not built (make spa)")
    scripts = list((dist / "assets").glob("*.js"))
    assert scripts
    assert [p.name for p in dist.rglob("*.map")] == []
    assert [p.name for p in scripts if "sourceMappingURL=" in p.read_text()] == []


def test_api_docs_load_swagger_ui_from_this_app_only(spa_client: TestClient) -> None:
    page = spa_client.get("/api/v1/docs")
    assert page.status_code == 200
    assert '<script src="/swagger-ui/swagger-ui-bundle.js">' in page.text
    assert 'href="/swagger-ui/swagger-ui.css"' in page.text
    assert "http" not in page.text.replace("http-equiv", "")  # no other origin named
    csp = page.headers["content-security-policy"]
    assert "http" not in csp and "'unsafe-inline'" not in csp.split("style-src")[0]
    assert "script-src 'self' 'sha256-" in csp
