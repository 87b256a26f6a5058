"""Security headers on every response.

The CSP allows only this origin. ``'wasm-unsafe-eval'`` lets the packet-detail panel compile Wiregasm
(WebAssembly) and ``blob:`` workers run it; ``style-src 'unsafe-inline'`` is for style attributes that
React and d3 set. The API docs page (Swagger UI) loads its script and CSS from a CDN and starts with an
inline script, so it gets its own, looser policy.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request, Response

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


def install(app: FastAPI, docs_path: str) -> None:
    @app.middleware("http")
    async def security_headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        for name, value in COMMON_HEADERS.items():
            response.headers.setdefault(name, value)
        csp = DOCS_CSP if request.url.path == docs_path else APP_CSP
        response.headers.setdefault("Content-Security-Policy", csp)
        return response
