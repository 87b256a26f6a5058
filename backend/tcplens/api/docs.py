"""The API explorer at ``/api/v1/docs``: FastAPI's Swagger UI page, with Swagger UI's script and
stylesheet served by this app from the SPA build (the ``swagger-ui-dist`` npm package, copied by
``frontend/swagger-ui.vite.ts``), not from a CDN: the page works offline and loads nothing from
another origin.

The page starts Swagger UI with one inline script; its policy allows that script by its hash
(CSP3 hash-source) instead of every inline script.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

# Where the SPA build puts swagger-ui-dist's files (frontend/swagger-ui.vite.ts).
SWAGGER_UI_ASSETS = "/swagger-ui"
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_csp(inline_scripts: list[bytes]) -> str:
    hashes = " ".join(
        f"'sha256-{base64.b64encode(hashlib.sha256(s).digest()).decode()}'" for s in inline_scripts
    )
    return (
        f"default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; "
        "form-action 'self'; frame-ancestors 'none'"
    )


def install(app: FastAPI, docs_path: str, openapi_url: str) -> None:
    page = get_swagger_ui_html(
        openapi_url=openapi_url,
        title=f"{app.title} API",
        swagger_js_url=f"{SWAGGER_UI_ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{SWAGGER_UI_ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{SWAGGER_UI_ASSETS}/favicon-32x32.png",
        # Swagger UI would otherwise send the schema to validator.swagger.io for a badge.
        swagger_ui_parameters={"validatorUrl": None},
    )
    body = bytes(page.body)
    csp = docs_csp(_INLINE_SCRIPT.findall(body))
    router = APIRouter(include_in_schema=False)

    @router.get(docs_path)
    def docs() -> HTMLResponse:
        return HTMLResponse(body, headers={"Content-Security-Policy": csp})

    app.include_router(router)
