"""Who is calling: a browser session cookie (with CSRF protection on unsafe methods), an API token
(``Authorization: Bearer tcpl_…``) or, on ``/shared/{token}/…``, a share link.

CSRF: the session cookie is ``SameSite=Lax`` and unsafe requests that rely on it must also send
``X-CSRF-Token`` equal to the HMAC of the session token (signed double-submit, OWASP CSRF
cheat sheet). Bearer tokens are not sent by browsers on their own, so they need no CSRF token.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request, Response
from sqlalchemy.orm import Session

from tcplens.api.deps import SessionDep, SettingsDep
from tcplens.errors import NotAuthenticated, PermissionDenied
from tcplens.services import accounts, api_tokens, credentials, sharing
from tcplens.services.access import Viewer
from tcplens.services.context import ServiceContext
from tcplens.settings import Settings

SESSION_COOKIE = "tcplens_session"
CSRF_COOKIE = "tcplens_csrf"
CSRF_HEADER = "X-CSRF-Token"
# RFC 6265bis §4.1.3.2: a "__Host-" cookie is accepted only with Secure, Path=/ and no Domain,
# so no sibling subdomain (or plain-http page) can set or overwrite it (session fixation).
# Browsers take Secure cookies from http://127.0.0.1 and localhost too; with
# TCPLENS_COOKIE_SECURE=false (plain http elsewhere) the names go without the prefix.
HOST_PREFIX = "__Host-"
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class CsrfFailed(PermissionDenied):
    code = "csrf_failed"


class SessionRequired(PermissionDenied):
    code = "session_required"


def get_service(request: Request) -> ServiceContext:
    service: ServiceContext = request.app.state.service
    return service


ServiceDep = Annotated[ServiceContext, Depends(get_service)]


def cookie_name(settings: Settings, name: str) -> str:
    return HOST_PREFIX + name if settings.cookie_secure else name


def session_cookie(request: Request, settings: Settings) -> str | None:
    """The session token the browser sent, if any."""
    return request.cookies.get(cookie_name(settings, SESSION_COOKIE))


def set_session_cookies(response: Response, settings: Settings, token: str) -> str:
    csrf = credentials.csrf_token_for(token, settings.secret_key.get_secret_value())
    for name, value, httponly in (
        (SESSION_COOKIE, token, True),
        # Readable by the SPA's JavaScript on purpose: it copies it into the header.
        (CSRF_COOKIE, csrf, False),
    ):
        response.set_cookie(
            cookie_name(settings, name),
            value,
            max_age=settings.session_max_age_s,
            secure=settings.cookie_secure,
            httponly=httponly,
            samesite="lax",
            path="/",
        )
    return csrf


def clear_session_cookies(response: Response, settings: Settings) -> None:
    for name in (SESSION_COOKIE, CSRF_COOKIE):
        response.delete_cookie(
            cookie_name(settings, name), path="/", secure=settings.cookie_secure, samesite="lax"
        )


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise NotAuthenticated("the Authorization header must be 'Bearer <token>'")
    return value.strip()


def optional_viewer(request: Request, session: SessionDep, settings: SettingsDep) -> Viewer | None:
    token = _bearer(request)
    if token is not None:
        holder = api_tokens.holder_of(session, token)
        if holder is None:
            raise NotAuthenticated("the API token is unknown or revoked")
        return Viewer(
            via="token",
            user_id=holder.user.id,
            workspace_ids=frozenset({holder.workspace_id}),
            default_workspace_id=holder.workspace_id,
            scopes=holder.scopes,
        )
    cookie = session_cookie(request, settings)
    if not cookie:
        return None
    user = accounts.user_of_session(session, cookie, settings.session_idle_timeout_s)
    if user is None:
        return None
    accounts.claim_invitations(session, user)
    if request.method not in _SAFE_METHODS:
        expected = credentials.csrf_token_for(cookie, settings.secret_key.get_secret_value())
        presented = request.headers.get(CSRF_HEADER, "")
        if not credentials.same_secret(presented, expected):
            raise CsrfFailed(f"missing or wrong {CSRF_HEADER} header")
    return viewer_for_user(session, user.id)


def viewer_for_user(session: Session, user_id: uuid.UUID) -> Viewer:
    workspaces = accounts.workspaces_of(session, user_id)
    owned = [w.id for w in workspaces if w.role == "owner"]
    return Viewer(
        via="session",
        user_id=user_id,
        workspace_ids=frozenset(w.id for w in workspaces),
        default_workspace_id=owned[0] if owned else (workspaces[0].id if workspaces else None),
    )


def required_viewer(viewer: Annotated[Viewer | None, Depends(optional_viewer)]) -> Viewer:
    if viewer is None:
        raise NotAuthenticated("sign in, or send an API token as 'Authorization: Bearer <token>'")
    return viewer


@dataclass(frozen=True)
class SharedCapture:
    """What a share token opens: its read-only viewer and the one capture that viewer sees."""

    viewer: Viewer
    capture_id: uuid.UUID


def shared_capture(token: str, session: SessionDep) -> SharedCapture:
    viewer = sharing.viewer_of(session, token)
    if viewer.shared_capture_id is None:  # (a share viewer always has one)
        raise sharing.ShareLinkNotFound("no such capture")
    return SharedCapture(viewer, viewer.shared_capture_id)


ViewerDep = Annotated[Viewer, Depends(required_viewer)]


# What the route does, as an API token's scope (a session holds them all).
def _reader(viewer: ViewerDep) -> Viewer:
    return viewer.requiring("captures:read")


def _writer(viewer: ViewerDep) -> Viewer:
    return viewer.requiring("captures:write")


def _admin(viewer: ViewerDep) -> Viewer:
    return viewer.requiring("admin")


def _browser(viewer: ViewerDep) -> Viewer:
    if viewer.via != "session":
        raise SessionRequired("only a signed-in browser does this, not an API token")
    return viewer


ReaderDep = Annotated[Viewer, Depends(_reader)]
BrowserDep = Annotated[Viewer, Depends(_browser)]
WriterDep = Annotated[Viewer, Depends(_writer)]
AdminDep = Annotated[Viewer, Depends(_admin)]
OptionalViewerDep = Annotated[Viewer | None, Depends(optional_viewer)]
SharedCaptureDep = Annotated[SharedCapture, Depends(shared_capture)]
