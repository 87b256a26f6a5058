"""In production: HSTS on every answer, and requests naming a host not in
``TCPLENS_ALLOWED_HOSTS`` refused, so a share link is never built from a forged Host header."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tcplens.main import create_app
from tcplens.settings import Settings
from tests.api.service_fixtures import sign_up, tiny_pcap

SECRET = "q" * 16 + "Zx9-" * 5


def _production(tmp_path: Path, **extra: object) -> Settings:
    return Settings(
        environment="production",
        secret_key=SECRET,
        data_dir=tmp_path / "data",
        spa_dir=tmp_path / "spa",
        in_process_worker=False,
        **extra,  # type: ignore[arg-type]
    )


def test_production_sends_hsts_and_development_does_not(
    tmp_path: Path, engine: Engine, client: TestClient
) -> None:
    settings = _production(tmp_path, public_url="https://tcplens.example.net")
    with TestClient(create_app(settings, engine), base_url="https://testserver") as production:
        for path in ("/api/v1/health", "/api/v1/captures", "/"):
            answer = production.get(path)
            assert answer.headers["strict-transport-security"] == "max-age=31536000", path
    assert "strict-transport-security" not in client.get("/api/v1/health").headers


def test_share_links_take_no_forged_host(tmp_path: Path, engine: Engine) -> None:
    settings = _production(tmp_path, allowed_hosts="tcplens.example.net")
    app = create_app(settings, engine)
    with TestClient(app, base_url="https://tcplens.example.net") as client:
        alice = sign_up(client)
        upload = client.post(
            "/api/v1/captures?filename=s.pcap", content=tiny_pcap(b"host"), headers=alice.headers()
        )
        capture_id = upload.json()["capture"]["id"]
        share = client.post(
            f"/api/v1/captures/{capture_id}/shares", json={}, headers=alice.headers()
        )
        assert share.status_code == 201, share.text
        assert share.json()["url"].startswith("https://tcplens.example.net/shared/")
        forged = client.post(
            f"/api/v1/captures/{capture_id}/shares",
            json={},
            headers={**alice.headers(), "Host": "evil.example.com"},
        )
        assert forged.status_code == 400
        assert "evil.example.com" not in forged.text
