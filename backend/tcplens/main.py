"""The FastAPI application factory.

``create_app(settings, engine)`` is what ``tcplens serve`` and the tests call with a migrated engine.
Without an engine (``uvicorn --factory tcplens.main:create_app``, as ``make dev`` does) the app resolves
the database from the settings and migrates it at startup.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI
from sqlalchemy import Engine
from starlette.middleware.trustedhost import TrustedHostMiddleware
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

import tcplens
from tcplens.api import docs, problems, security_headers, spa
from tcplens.api.body_limit import BodyLimit
from tcplens.api.router import API_PREFIX, api_router
from tcplens.db import migrate
from tcplens.db.engine import make_engine, make_sessionmaker, resolve_database
from tcplens.services.context import build_context
from tcplens.services.leftovers import sweep_leftovers
from tcplens.services.worker import in_process_worker
from tcplens.settings import Settings, get_settings

DOCS_PATH = f"{API_PREFIX}/docs"


def create_app(settings: Settings | None = None, engine: Engine | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        database = None
        app_engine = engine
        if app_engine is None:
            database = resolve_database(settings)
            app_engine = make_engine(database.url)
            migrate.upgrade(app_engine)
        app.state.engine = app_engine
        app.state.sessionmaker = make_sessionmaker(app_engine)
        app.state.service = build_context(settings, app_engine, app.state.sessionmaker)
        await asyncio.to_thread(sweep_leftovers, app.state.service)
        try:
            async with contextlib.AsyncExitStack() as background:
                if settings.in_process_worker:
                    await background.enter_async_context(in_process_worker(app.state.service))
                yield
        finally:
            # Only what this app started itself; after the worker, which may still use the database.
            if database is not None:
                app_engine.dispose()
                database.release()

    app = FastAPI(
        title="tcplens",
        version=tcplens.__version__,
        summary="Why was this TCP transfer slow, and what do I change?",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # api.docs serves it, with Swagger UI from this app
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.settings = settings
    problems.install(app)
    # Inside the security headers, so a refused body gets them too.
    app.add_middleware(BodyLimit, exempt=frozenset({("POST", f"{API_PREFIX}/captures")}))
    security_headers.install(app, production=settings.environment == "production")
    if settings.allowed_host_list:
        # A request naming another host is refused before anything reads its Host.
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.allowed_host_list)
    if settings.trusted_proxies:
        # Outermost: everything inside sees the client the trusted proxy names (rate limits,
        # the scheme of share URLs). `tcplens serve` turns uvicorn's own copy off, which by
        # default believes X-Forwarded-For from any process on 127.0.0.1.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=settings.trusted_proxies)
    app.include_router(api_router)
    docs.install(app, DOCS_PATH, f"{API_PREFIX}/openapi.json")
    spa.install(app, Path(settings.spa_dir) if settings.spa_dir else spa.default_spa_dir())
    return app
