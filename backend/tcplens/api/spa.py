"""The built single-page app at ``/``: files of the build as they are, every other non-API path gets
``index.html`` so the SPA's client-side routes survive a reload or a shared link."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse

import tcplens
from tcplens import errors
from tcplens.api.router import API_PREFIX
from tcplens.api.security_headers import WORKER_CSP

_CHECKOUT_DIST = Path(tcplens.__file__).resolve().parent.parent.parent / "frontend" / "dist"
_PACKAGED_DIST = Path(tcplens.__file__).resolve().parent / "spa"

# Vite puts content-hashed files under assets/: they never change, so browsers may keep them.
_IMMUTABLE = "public, max-age=31536000, immutable"
# Wiregasm (the in-browser Wireshark) lives under wiregasm/<version>/, as immutable as assets/. Its
# WebAssembly module and data package ship gzip-compressed only (19 MB instead of 69 MB) and are sent
# as they are with Content-Encoding: gzip, which every browser accepts.
_VERSIONED_DIRS = ("assets", "wiregasm")
# The Wiregasm worker's bundle (frontend/src/wiregasm/wiregasm-worker.ts) gets its own policy.
_WORKER_PREFIX = "wiregasm-worker-"
_PRECOMPRESSED = {".wasm": "application/wasm", ".data": "application/octet-stream"}


def default_spa_dir() -> Path:
    """The checkout's ``frontend/dist``, else the copy packed into the package (Docker image)."""
    return _CHECKOUT_DIST if _CHECKOUT_DIST.is_dir() else _PACKAGED_DIST


class SpaNotBuilt(errors.NotFound):
    code = "spa_not_built"
    title = "The web app is not built"


def install(app: FastAPI, spa_dir: Path) -> None:
    """Add the catch-all route; call after every API router is included."""
    root = spa_dir.resolve()
    router = APIRouter(include_in_schema=False)

    @router.get("/{path:path}")
    def spa(path: str) -> FileResponse:
        if path == API_PREFIX.strip("/") or path.startswith(API_PREFIX.lstrip("/") + "/"):
            raise errors.NotFound(f"no API route /{path}")
        index = root / "index.html"
        if not index.is_file():
            raise SpaNotBuilt(
                f"no index.html in {root}; build it with `make run` or `npm run build`"
            )
        if path:
            try:
                found = _build_file(root, path)
            except (OSError, ValueError):
                # A NUL byte, or a name longer than the file system allows: no file of the build.
                found = None
            if found is not None:
                return found
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    app.include_router(router)


def _build_file(root: Path, path: str) -> FileResponse | None:
    """The file of the build at ``path`` (never outside ``root``), or None."""
    candidate = (root / path).resolve()
    gzipped = candidate.with_name(candidate.name + ".gz")
    if (
        candidate.suffix in _PRECOMPRESSED
        and gzipped.is_file()
        and gzipped.is_relative_to(root / "wiregasm")
    ):
        return FileResponse(
            gzipped,
            media_type=_PRECOMPRESSED[candidate.suffix],
            headers={"Cache-Control": _IMMUTABLE, "Content-Encoding": "gzip"},
        )
    if candidate.is_file() and candidate.is_relative_to(root):
        immutable = any(candidate.is_relative_to(root / d) for d in _VERSIONED_DIRS)
        headers = {"Cache-Control": _IMMUTABLE} if immutable else {}
        if candidate.parent == root / "assets" and candidate.name.startswith(_WORKER_PREFIX):
            headers["Content-Security-Policy"] = WORKER_CSP
        return FileResponse(candidate, headers=headers or None)
    return None
