"""``/api/v1``: every API router is included here, in one place."""

from __future__ import annotations

from fastapi import APIRouter

from tcplens.api import health

API_PREFIX = "/api/v1"

api_router = APIRouter(prefix=API_PREFIX)
api_router.include_router(health.router)
