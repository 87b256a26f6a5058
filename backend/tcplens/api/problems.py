"""Every error leaves the API as ``application/problem+json`` (RFC 9457), rendered in one place.

Domain errors (``tcplens.errors``) map to a status by family; FastAPI's own HTTP and validation errors
and anything unexpected are rendered the same way, so clients parse one shape and never see a
traceback.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import InterfaceError, OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException

from tcplens import errors
from tcplens.api.schemas import Problem

logger = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"

STATUS_OF_FAMILY: dict[type[errors.TcplensError], int] = {
    errors.InvalidInput: 422,
    errors.NotFound: 404,
    errors.PermissionDenied: 403,
    errors.Conflict: 409,
    errors.Gone: 410,
    errors.TooLarge: 413,
    errors.ServiceUnavailable: 503,
    errors.NotAuthenticated: 401,
    errors.UnsupportedMediaType: 415,
    errors.TooManyRequests: 429,
}


def status_of(error: errors.TcplensError) -> int:
    for family in type(error).__mro__:
        if family in STATUS_OF_FAMILY:
            return STATUS_OF_FAMILY[family]
    return 500


def problem(
    request: Request, status: int, code: str, title: str, detail: str, **extra: Any
) -> JSONResponse:
    body = {
        "type": f"urn:tcplens:problem:{code}",
        "title": title,
        "status": status,
        "detail": detail,
        "code": code,
        "instance": request.url.path,
        **extra,
    }
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON)


async def _domain_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, errors.TcplensError)
    response = problem(request, status_of(exc), exc.code, exc.title, exc.detail, **exc.extra)
    if isinstance(exc, errors.TooManyRequests):
        response.headers["Retry-After"] = str(exc.retry_after_s)
    if isinstance(exc, errors.ServiceUnavailable):
        response.headers["Retry-After"] = str(DATABASE_RETRY_AFTER_S)
    if isinstance(exc, errors.NotAuthenticated):
        response.headers["WWW-Authenticate"] = "Bearer"
    return response


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    phrase = HTTPStatus(exc.status_code).phrase
    code = phrase.lower().replace(" ", "_").replace("-", "_")
    detail = exc.detail if isinstance(exc.detail, str) else phrase
    response = problem(request, exc.status_code, code, phrase, detail)
    if exc.headers:
        response.headers.update(exc.headers)
    return response


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    fields = [
        {"location": list(e.get("loc", ())), "message": e.get("msg", "")} for e in exc.errors()
    ]
    return problem(
        request,
        422,
        "invalid_input",
        errors.InvalidInput.title,
        "request validation failed",
        errors=fields,
    )


# Seconds a client should wait before trying again when the database does not answer: an
# embedded or managed PostgreSQL restarts within a few.
DATABASE_RETRY_AFTER_S = 5


async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """The database does not answer (down, restarting, unreachable): 503 with Retry-After
    (RFC 9110 §15.6.4), not an internal error. psycopg raises OperationalError for a lost or
    refused connection, SQLAlchemy InterfaceError for one it found closed."""
    logger.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc)
    response = problem(
        request,
        503,
        "database_unavailable",
        errors.ServiceUnavailable.title,
        "the database does not answer; try again shortly",
    )
    response.headers["Retry-After"] = str(DATABASE_RETRY_AFTER_S)
    return response


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    logger.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem(request, 500, "internal_error", "Internal error", "an unexpected error occurred")


def install(app: FastAPI) -> None:
    app.add_exception_handler(errors.TcplensError, _domain_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(OperationalError, _database_unavailable)
    app.add_exception_handler(InterfaceError, _database_unavailable)
    app.add_exception_handler(Exception, _unexpected_error)
    _document(app)


def _document(app: FastAPI) -> None:
    """Make the OpenAPI schema say what the handlers above send: any operation may answer a
    4XX ``Problem`` as ``application/problem+json``. FastAPI documents its own 422 body
    (``HTTPValidationError`` as ``application/json``) instead, which this API never sends, so a
    client generated from the schema would parse errors wrongly."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        components = schema.setdefault("components", {}).setdefault("schemas", {})
        for name in ("HTTPValidationError", "ValidationError"):
            components.pop(name, None)
        problem_schema = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
        components.update(problem_schema.pop("$defs", {}))
        components["Problem"] = problem_schema
        error = {
            "description": "The request was refused: the problem says why (`code`)",
            "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for item in schema.get("paths", {}).values():
            for operation in item.values():
                responses = operation.setdefault("responses", {})
                responses.pop("422", None)
                responses["4XX"] = error
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
