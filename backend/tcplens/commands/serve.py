"""``tcplens serve``: migrate the database, then serve the API and the built SPA."""

from __future__ import annotations

import argparse
from typing import Any


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "serve",
        help="serve the web app and API",
        description="Apply database migrations, then serve the API and the web app. "
        "Listens on TCPLENS_HOST:TCPLENS_PORT (default 127.0.0.1:8000).",
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
    database = resolve_database(settings)
    print(f"tcplens: data directory {settings.data_path}", flush=True)
    print(f"tcplens: database {database.description}", flush=True)
    engine = make_engine(database.url)
    migrate.upgrade(engine)
    app = create_app(settings, engine)
    shown_host = f"[{host}]" if ":" in host else host
    print(f"tcplens: serving on http://{shown_host}:{port}/", flush=True)
    try:
        uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)
    finally:
        engine.dispose()
        database.release()
    return 0
