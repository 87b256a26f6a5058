"""The built single-page app at ``/``: files of the build as they are, every other non-API path gets
``index.html`` so the SPA's client-side routes survive a reload or a shared link."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse

import tcplens
from tcplens import errors
from tcplens.api.router import API_PREFIX

_CHECKOUT_DIST = Path(tcplens.__file__).resolve().parent.parent.parent / "frontend" / "dist"
_PACKAGED_DIST = Path(tcplens.__file__).resolve().parent / "spa"

# Vite puts content-hashed files under assets/: they never change, so browsers may keep them.
_IMMUTABLE = "public, max-age=31536000, immutable"


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
        candidate = (root / path).resolve()
        if path and candidate.is_file() and candidate.is_relative_to(root):
            immutable = candidate.is_relative_to(root / "assets")
            return FileResponse(
                candidate, headers={"Cache-Control": _IMMUTABLE} if immutable else None
            )
        return FileResponse(index, headers={"Cache-Control": "no-cache"})

    app.include_router(router)
