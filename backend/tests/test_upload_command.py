"""The admin and upload commands against a real `tcplens serve` (in-process worker) on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from tests.capture.shared_captures import LAB, require
from tests.serving import running_server


def _tcplens(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tcplens.cli", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def env(engine: Engine, database_url: str, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TCPLENS_DATABASE_URL": database_url,
        "TCPLENS_DATA_DIR": str(tmp_path / "data"),
        "TCPLENS_SPA_DIR": str(tmp_path / "spa"),
    }


@pytest.fixture
def server(env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    with running_server(env, tmp_path / "serve.log") as url:
        yield url


def test_users_and_tokens_commands(env: dict[str, str]) -> None:
    created = _tcplens(
        env, "users", "create", "ops@example.com", "--password-stdin", stdin="a long password\n"
    )
    assert created.returncode == 0, created.stderr
    again = _tcplens(
        env, "users", "create", "ops@example.com", "--password-stdin", stdin="a long password\n"
    )
    assert again.returncode == 1 and "already exists" in again.stderr
    token = _tcplens(env, "tokens", "create", "--user", "ops@example.com")
    assert token.returncode == 0 and token.stdout.strip().startswith("tcpl_")
    missing = _tcplens(env, "tokens", "create", "--user", "ops@example.com", "--workspace", "nope")
    assert missing.returncode == 1 and "nope" in missing.stderr


def test_upload_waits_prints_findings_and_shares_only_when_asked(
    env: dict[str, str], server: str, tmp_path: Path
) -> None:
    require(LAB)
    assert (
        _tcplens(
            env, "users", "create", "ci@example.com", "--password-stdin", stdin="a long password\n"
        ).returncode
        == 0
    )
    token = _tcplens(env, "tokens", "create", "--user", "ci@example.com").stdout.strip()
    client_env = {**env, "TCPLENS_TOKEN": token}
    capture = LAB / "lossy_download.pcap"

    done = _tcplens(client_env, "upload", str(capture), "--server", server, "--wait", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["uploads"][0]
    assert result["capture"]["status"] == "done"
    assert result["capture"]["facts"]["packets"] == 6567
    # no share link unless asked for (issue 30): none was made
    assert "share_url" not in result
    links = f"{server}/api/v1/captures/{result['capture']['id']}/shares"
    listing = urllib.request.Request(links, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(listing) as listed:
        assert json.load(listed) == []

    shared = _tcplens(client_env, "upload", str(capture), "--server", server, "--share", "--json")
    assert shared.returncode == 0, shared.stderr
    result = json.loads(shared.stdout)["uploads"][0]
    expires = datetime.fromisoformat(result["share_expires_at"])
    assert timedelta(days=6, hours=23) < expires - datetime.now(UTC) <= timedelta(days=7)
    share_token = result["share_url"].rsplit("/", 1)[1]
    with urllib.request.urlopen(f"{server}/api/v1/shared/{share_token}") as opened:
        assert json.load(opened)["id"] == result["capture"]["id"]
    with pytest.raises(urllib.error.HTTPError) as refused_file:
        urllib.request.urlopen(f"{server}/api/v1/shared/{share_token}/file")
    assert refused_file.value.code == 403
    assert json.load(refused_file.value)["code"] == "share_download_not_allowed"

    forever = _tcplens(
        client_env,
        "upload",
        str(capture),
        "--server",
        server,
        "--share",
        "--expires",
        "never",
        "--share-file",
        "--json",
    )
    result = json.loads(forever.stdout)["uploads"][0]
    assert result["share_expires_at"] is None
    share_token = result["share_url"].rsplit("/", 1)[1]
    with urllib.request.urlopen(f"{server}/api/v1/shared/{share_token}/file") as file:
        assert file.read() == capture.read_bytes()

    human = _tcplens(client_env, "upload", str(capture), "--server", server, "--wait")
    assert human.returncode == 0 and "6567 packets" in human.stdout
    assert "share:" not in human.stdout
    bad_expiry = _tcplens(
        client_env, "upload", str(capture), "--server", server, "--share", "--expires", "soon"
    )
    assert bad_expiry.returncode == 2 and "soon" in bad_expiry.stderr

    # the lossy transfer has a high-severity loss finding
    gate = _tcplens(client_env, "upload", str(capture), "--server", server, "--fail-on", "high")
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "[high]" in gate.stdout

    not_capture = tmp_path / "notes.txt"
    not_capture.write_text("not a capture")
    refused = _tcplens(client_env, "upload", str(not_capture), "--server", server)
    assert refused.returncode == 5 and "415" in refused.stderr

    bad_token = _tcplens(
        {**env, "TCPLENS_TOKEN": "tcpl_wrong"}, "upload", str(capture), "--server", server
    )
    assert bad_token.returncode == 3
    no_token = _tcplens(
        {k: v for k, v in env.items() if k != "TCPLENS_TOKEN"}, "upload", str(capture)
    )
    assert no_token.returncode == 2
    unreachable = _tcplens(client_env, "upload", str(capture), "--server", "http://127.0.0.1:9")
    assert unreachable.returncode == 4


def test_upload_compares_with_an_earlier_capture_and_fails_on_a_regression(
    env: dict[str, str], server: str
) -> None:
    from tests.diagnosis.pairs import RWND, pair_file

    assert (
        _tcplens(
            env, "users", "create", "cmp@example.com", "--password-stdin", stdin="a long password\n"
        ).returncode
        == 0
    )
    token = _tcplens(env, "tokens", "create", "--user", "cmp@example.com").stdout.strip()
    client_env = {**env, "TCPLENS_TOKEN": token}
    before, after = pair_file(RWND, "before"), pair_file(RWND, "after")
    first = _tcplens(client_env, "upload", str(before), "--server", server, "--wait", "--json")
    before_id = json.loads(first.stdout)["uploads"][0]["capture"]["id"]

    fixed = _tcplens(
        client_env, "upload", str(after), "--server", server,
        "--compare-with", before_id, "--fail-on-regression",
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Resolved: receiver-window-limited" in fixed.stdout
    after_id = fixed.stdout.split("(capture ", 1)[1].split(")", 1)[0]

    # the other way round: the window limit is new and the transfer ~4x slower
    worse = _tcplens(
        client_env, "upload", str(before), "--server", server, "--json",
        "--compare-with", after_id, "--fail-on-regression",
    )  # fmt: skip
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "regression: new finding: receiver-window-limited" in worse.stderr
    assert "slower by more than 10%" in worse.stderr
    comparison = json.loads(worse.stdout)["uploads"][0]["comparison"]
    assert comparison["new"] == ["receiver-window-limited"] and comparison["speedup"] < 1

    # --fail-on-regression without a capture to compare with is a usage error
    lone = _tcplens(client_env, "upload", str(after), "--server", server, "--fail-on-regression")
    assert lone.returncode == 2 and "--compare-with" in lone.stderr
