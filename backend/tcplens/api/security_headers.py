"""Security headers on every response.

The CSP allows only this origin. ``'wasm-unsafe-eval'`` lets the packet-detail panel compile Wiregasm
(WebAssembly) and ``blob:`` workers run it; ``style-src 'unsafe-inline'`` is for style attributes that
React and d3 set. A response that sets its own policy keeps it (the Wiregasm worker, the API docs
page: ``api.docs``).
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

APP_CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
# The Wiregasm worker (assets/wiregasm-worker-*.js) runs under the policy sent with its own script
# (CSP3: a worker does not inherit the page's). Wireshark's Emscripten/embind glue builds its
# bindings with `new Function`, so the worker, and only the worker, needs 'unsafe-eval'; it may load
# scripts and fetch only from this origin and has nothing else (no network elsewhere, no DOM).
WORKER_CSP = (
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'; connect-src 'self'"
)
# RFC 6797: browsers reach this host over HTTPS only, for a year (production only: a development
# server on http://127.0.0.1 is not HTTPS, and browsers ignore the header over plain HTTP anyway).
HSTS = "max-age=31536000"
COMMON_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


class SecurityHeaders:
    """Pure ASGI middleware (Starlette's ``BaseHTTPMiddleware`` runs every request through an
    extra task and memory streams: about a tenth of the server's time under 50 clients)."""

    def __init__(self, app: ASGIApp, production: bool) -> None:
        self.app = app
        self.headers = {
            **COMMON_HEADERS,
            **({"Strict-Transport-Security": HSTS} if production else {}),
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers.setdefault(name, value)
                headers.setdefault("Content-Security-Policy", APP_CSP)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def install(app: FastAPI, *, production: bool) -> None:
    app.add_middleware(SecurityHeaders, production=production)
