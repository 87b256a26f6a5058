"""``tcplens serve``: migrate the database, then serve the API and the built SPA."""

from __future__ import annotations

import argparse
import contextlib
import errno
import signal
import socket
import sys
from types import FrameType
from typing import Any

# Exit code when the address cannot be listened on (in use, not local, not permitted).
EXIT_CANNOT_LISTEN = 3


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "serve",
        help="serve the web app and API",
        description="Apply database migrations, then serve the API and the web app. "
        "Listens on TCPLENS_HOST:TCPLENS_PORT (default 127.0.0.1:8000); "
        f"exits with {EXIT_CANNOT_LISTEN} when that address cannot be listened on.",
    )
    parser.add_argument("--host", help="address to listen on (default: TCPLENS_HOST)")
    parser.add_argument("--port", type=int, help="port to listen on (default: TCPLENS_PORT)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from tcplens.db import migrate
    from tcplens.db.engine import make_engine, resolve_database
    from tcplens.main import create_app
    from tcplens.settings import get_settings

    settings = get_settings()
    host = args.host or settings.host
    port = settings.port if args.port is None else args.port
    shown_host = f"[{host}]" if ":" in host else host
    # Bound first, before the database and the worker start: a port in use is one line and an
    # exit code, not a bind error after start-up followed by a worker shutting down.
    try:
        listener = listen(host, port)
    except OSError as error:
        reason = "is already in use" if error.errno == errno.EADDRINUSE else f"failed: {error}"
        print(
            f"tcplens serve: listening on {shown_host}:{port} {reason}; "
            "choose another with --port or TCPLENS_PORT",
            file=sys.stderr,
        )
        return EXIT_CANNOT_LISTEN
    with listener:
        database = resolve_database(settings)
        print(f"tcplens: data directory {settings.data_path}", flush=True)
        print(f"tcplens: database {database.description}", flush=True)
        engine = make_engine(database.url)
        try:
            migrate.upgrade(engine)
            app = create_app(settings, engine)
            print(f"tcplens: serving on http://{shown_host}:{port}/", flush=True)
            config = uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level="info",
                server_header=False,
                # Forwarded headers are the app's business (TCPLENS_TRUSTED_PROXIES, main.py).
                proxy_headers=False,
            )
            server = uvicorn.Server(config)
            stop_on_signals(server)
            server.run(sockets=[listener])
        finally:
            # In order: the app's shutdown has stopped the worker and its analyses; then what is
            # left of the processes this one started (the analysis fork server), then the database.
            stop_child_processes()
            engine.dispose()
            database.release()
    return 0


def stop_on_signals(server: Any) -> None:
    """Make SIGTERM and SIGHUP stop ``serve`` as Ctrl-C does: gracefully, then through the
    ``finally`` that stops what it started.

    uvicorn shuts down gracefully on SIGINT and SIGTERM and then raises the signal again under the
    handler that was installed before it started. Python's default for SIGINT raises
    KeyboardInterrupt (the ``finally`` runs); its default for SIGTERM ends the process on the spot,
    which left the embedded PostgreSQL server running. uvicorn does not listen to SIGHUP (a closed
    terminal): the first one starts its graceful shutdown, the one it raises again ends it.
    """

    def hang_up(signum: int, frame: FrameType | None) -> None:
        if server.should_exit:
            _exit_for_signal(signum, frame)
        server.handle_exit(signum, frame)

    signal.signal(signal.SIGTERM, _exit_for_signal)
    signal.signal(signal.SIGHUP, hang_up)


def _exit_for_signal(signum: int, _frame: FrameType | None) -> None:
    # 128 + n: the shell's convention for "ended by signal n"
    raise SystemExit(128 + signum)


# How long the processes left at the end get to exit on SIGTERM before SIGKILL.
CHILD_STOP_TIMEOUT_S = 10.0


def stop_child_processes() -> None:
    """Stop every process this one started that is still running (the analysis fork server, any
    analysis child): SIGTERM, then SIGKILL after a grace period. The embedded PostgreSQL server is
    not among them (``pg_ctl`` detaches it); it is stopped after.

    multiprocessing's resource tracker is left alone: it ignores SIGTERM by design, and ends by
    itself once this process exits (its pipe from here closes), after releasing what leaked."""
    import psutil

    children = [
        child
        for child in psutil.Process().children(recursive=True)
        if not _is_resource_tracker(child)
    ]
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.terminate()
    _, alive = psutil.wait_procs(children, timeout=CHILD_STOP_TIMEOUT_S)
    for child in alive:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(alive, timeout=CHILD_STOP_TIMEOUT_S)


def _is_resource_tracker(process: Any) -> bool:
    import psutil

    try:
        return "multiprocessing.resource_tracker" in " ".join(process.cmdline())
    except psutil.Error:
        return False


def listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port, bound as uvicorn binds one (IPv6 when the host has a
    colon; SO_REUSEADDR: a port left in TIME_WAIT by a restart is free, one that another
    process listens on is not)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock
