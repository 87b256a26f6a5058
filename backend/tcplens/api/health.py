"""``GET /api/v1/health``: the version, and whether the database answers (503 when it does not)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

import tcplens
from tcplens.api.deps import EngineDep
from tcplens.errors import ServiceUnavailable

router = APIRouter(tags=["health"])


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    database: Literal["ok"]


@router.get("/health", response_model=Health)
def health(engine: EngineDep) -> Health:
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        raise ServiceUnavailable("the database does not answer", database="unavailable") from exc
    return Health(status="ok", version=tcplens.__version__, database="ok")
