"""A real ``tcplens serve`` on a free loopback port, for tests that go through uvicorn itself
(its protocol handling, forwarded headers, the CLI's HTTP client)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(env: dict[str, str], log: Path) -> Iterator[str]:
    """``tcplens serve`` with ``env``, until healthy; yields its URL and stops it after."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tcplens.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            try:
                with urllib.request.urlopen(url + "/api/v1/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("tcplens serve did not start: " + log.read_text())
                time.sleep(0.2)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
