"""``tcplens serve`` on an address another process already listens on: one line, an exit code,
and nothing started (no database, no worker); stopped by a signal: nothing left running."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tcplens.commands.serve import EXIT_CANNOT_LISTEN


def test_serve_refuses_a_port_in_use_up_front(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {
            **os.environ,
            "TCPLENS_DATA_DIR": str(tmp_path / "data"),
            "TCPLENS_HOST": "127.0.0.1",
            "TCPLENS_PORT": str(port),
        }
        result = subprocess.run(
            [sys.executable, "-m", "tcplens.cli", "serve"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == EXIT_CANNOT_LISTEN == 3
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"tcplens serve: listening on 127.0.0.1:{port} is already in use; "
        "choose another with --port or TCPLENS_PORT"
    ]
    # Refused before anything started: no embedded database was created.
    assert not (tmp_path / "data").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _postgres_of(data_dir: Path) -> list[psutil.Process]:
    """The postgres processes (postmaster and backends) whose command line names ``data_dir``
    (the postmaster's ``-D``; backends inherit its command line) or that run in it."""
    found = []
    for process in psutil.process_iter(["name", "cmdline", "cwd"]):
        with contextlib.suppress(psutil.Error):
            text = " ".join(process.info["cmdline"] or []) + " " + str(process.info["cwd"] or "")
            if process.info["name"] == "postgres" and str(data_dir) in text:
                found.append(process)
    return found


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_serve_stopped_by_a_signal_leaves_no_process_behind(signum: signal.Signals) -> None:
    """systemd and Docker send SIGTERM, a closed terminal SIGHUP, Ctrl-C SIGINT: each stops the
    worker, the analysis fork server and the embedded PostgreSQL server that serve started."""
    # Under /tmp, not pytest's 0700 tmp_path: as root the server runs as another user.
    scratch = Path(tempfile.mkdtemp(prefix="tcplens-test-serve-"))
    data_dir = scratch / "data"
    port = _free_port()
    env = {
        **os.environ,
        "TCPLENS_DATA_DIR": str(data_dir),
        "TCPLENS_PORT": str(port),
        "TCPLENS_SPA_DIR": str(scratch / "spa"),
    }
    env.pop("TCPLENS_DATABASE_URL", None)
    serve = subprocess.Popen(
        [sys.executable, "-m", "tcplens.cli", "serve"],
        env=env,
        stdout=(scratch / "serve.log").open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        fork_server: list[psutil.Process] = []
        while time.monotonic() < deadline and not fork_server:
            assert serve.poll() is None, (scratch / "serve.log").read_text()
            with contextlib.suppress(OSError):
                health = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/health")
                assert json.load(health)["database"] == "ok"
                fork_server = psutil.Process(serve.pid).children(recursive=True)
            time.sleep(0.2)
        started = psutil.Process(serve.pid).children(recursive=True)
        postgres = _postgres_of(data_dir / "postgres")
        assert fork_server and started, "serve started no analysis fork server"
        assert postgres, "serve started no embedded PostgreSQL server"

        serve.send_signal(signum)
        code = serve.wait(timeout=120)
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
    log = (scratch / "serve.log").read_text()
    try:
        _, alive = psutil.wait_procs(started + postgres, timeout=30)
        assert alive == [], f"left running: {alive}\n{log}"
        # 128 + n: ended by signal n, after its clean-up (the cli maps KeyboardInterrupt to 130)
        assert code == 128 + signum, log
        assert _postgres_of(data_dir / "postgres") == []
        assert not (data_dir / "postgres" / "postmaster.pid").exists()
    finally:
        for leftover in _postgres_of(data_dir / "postgres"):
            leftover.kill()
        shutil.rmtree(scratch, ignore_errors=True)
