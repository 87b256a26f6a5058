"""Security headers on every response.

The CSP allows only this origin. ``'wasm-unsafe-eval'`` lets the packet-detail panel compile Wiregasm
(WebAssembly) and ``blob:`` workers run it; ``style-src 'unsafe-inline'`` is for style attributes that
React and d3 set. The API docs page (Swagger UI) loads its script and CSS from a CDN and starts with an
inline script, so it gets its own, looser policy.
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
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
    "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; img-src 'self' data: "
    "https://fastapi.tiangolo.com; connect-src 'self'; object-src 'none'; frame-ancestors 'none'"
)
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

    def __init__(self, app: ASGIApp, docs_path: str) -> None:
        self.app = app
        self.docs_path = docs_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        csp = DOCS_CSP if scope["path"] == self.docs_path else APP_CSP

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in COMMON_HEADERS.items():
                    headers.setdefault(name, value)
                headers.setdefault("Content-Security-Policy", csp)
            await send(message)

        await self.app(scope, receive, send_with_headers)


def install(app: FastAPI, docs_path: str) -> None:
    app.add_middleware(SecurityHeaders, docs_path=docs_path)
