"""A bound on every request body but the upload's.

Starlette reads a JSON body whole into memory before validation sees it, so without a bound one
sign-up request could carry gigabytes. The bodies of this API are a few hundred bytes (credentials,
names, an expiry), so anything over ``MAX_BODY_BYTES`` is refused with 413 before the route runs.
The upload (``POST /api/v1/captures``) streams and counts its own bytes against
``TCPLENS_MAX_UPLOAD_BYTES`` (``api/captures.py``), so it is left alone here.

The body is read here (at most ``MAX_BODY_BYTES``) and replayed to the app: one place decides,
for declared (Content-Length) and chunked bodies alike.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tcplens import errors
from tcplens.api.problems import problem

MAX_BODY_BYTES = 1024 * 1024


class RequestTooLarge(errors.TooLarge):
    code = "request_too_large"


class BodyLimit:
    def __init__(self, app: ASGIApp, *, exempt: frozenset[tuple[str, str]]) -> None:
        self.app = app
        self.exempt = exempt  # (method, path) of routes that bound their own bodies

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or (scope["method"], scope["path"].rstrip("/")) in self.exempt:
            await self.app(scope, receive, send)
            return
        declared = Request(scope).headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            await self._refuse(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client left before the body ended
                await self.app(scope, _replay([message], receive), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                await self._refuse(scope, receive, send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body: Message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([body], receive), send)

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send) -> None:
        response = problem(
            Request(scope),
            413,
            RequestTooLarge.code,
            RequestTooLarge.title,
            f"request bodies are limited to {MAX_BODY_BYTES} bytes",
            limit_bytes=MAX_BODY_BYTES,
        )
        await response(scope, receive, send)


def _replay(pending: list[Message], receive: Receive) -> Receive:
    """``receive`` that hands out the messages already read, then the real ones (a streaming
    response listens on it for the client's disconnect)."""

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed
