"""The queue's own view of a job (procrastinate's ``procrastinate_jobs`` row), for the API."""

from __future__ import annotations

from sqlalchemy import text

from tcplens.services.context import ServiceContext


def job_status(ctx: ServiceContext, job_id: int | None) -> str | None:
    if job_id is None:
        return None
    with ctx.engine.connect() as connection:
        status = connection.execute(
            text("SELECT status::text FROM procrastinate_jobs WHERE id = :id"), {"id": job_id}
        ).scalar()
    return None if status is None else str(status)
