"""The domain errors of the service side, each with a stable ``code`` that clients can rely on.

Services raise these; ``tcplens.api.problems`` maps each family to an HTTP status and renders
``application/problem+json`` (RFC 9457). Extend by subclassing a family and giving a new code::

    class CaptureNotFound(NotFound):
        code = "capture_not_found"

The analysis core keeps its own errors (it imports nothing from here).
"""

from __future__ import annotations

from typing import Any, ClassVar


class TcplensError(Exception):
    """Base of all domain errors. ``detail`` is shown to the user: no internals, no secrets."""

    code: ClassVar[str] = "error"
    title: ClassVar[str] = "Something went wrong"

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        # Extra members of the problem document, e.g. a field name or a limit that was exceeded.
        self.extra = extra


class InvalidInput(TcplensError):
    code = "invalid_input"
    title = "The request is not valid"


class NotFound(TcplensError):
    code = "not_found"
    title = "Not found"


class PermissionDenied(TcplensError):
    code = "permission_denied"
    title = "Permission denied"


class Conflict(TcplensError):
    code = "conflict"
    title = "Conflict with the current state"


class Gone(TcplensError):
    """What was asked for existed and no longer does (revoked, expired)."""

    code = "gone"
    title = "No longer available"


class TooLarge(TcplensError):
    code = "too_large"
    title = "Too large"


class ServiceUnavailable(TcplensError):
    code = "service_unavailable"
    title = "Service unavailable"


class NotAuthenticated(TcplensError):
    code = "not_authenticated"
    title = "Authentication required"


class UnsupportedMediaType(TcplensError):
    code = "unsupported_media_type"
    title = "Unsupported media type"


class TooManyRequests(TcplensError):
    """A rate limit was hit; ``retry_after_s`` becomes the ``Retry-After`` header."""

    code = "rate_limited"
    title = "Too many requests"

    def __init__(self, detail: str, *, retry_after_s: int, **extra: object) -> None:
        super().__init__(detail, retry_after_s=retry_after_s, **extra)
        self.retry_after_s = retry_after_s
