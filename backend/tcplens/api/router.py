"""``/api/v1``: every API router is included here, in one place."""

from __future__ import annotations

from fastapi import APIRouter

from tcplens.api import accounts, captures, comparison, health, results, shared, shares, usage

API_PREFIX = "/api/v1"

api_router = APIRouter(prefix=API_PREFIX)
api_router.include_router(health.router)
api_router.include_router(accounts.auth_router)
api_router.include_router(accounts.workspaces_router)
api_router.include_router(usage.router)
api_router.include_router(accounts.tokens_router)
api_router.include_router(captures.router)
api_router.include_router(results.router)
api_router.include_router(comparison.router)
api_router.include_router(shares.router)
api_router.include_router(shares.workspace_router)
api_router.include_router(shared.router)
