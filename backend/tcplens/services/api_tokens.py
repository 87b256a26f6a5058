"""API tokens for scripts: prefixed ``tcpl_``, shown once, stored hashed, scoped to a workspace
and to what they may do (``services.access.SCOPES``), revocable. Sent as ``Authorization: Bearer``.

A token made by another token gets no scope its maker lacks, and a token sees and revokes only
the tokens of its own workspace: a leaked token cannot widen or outlive its own access."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, or_, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement

from tcplens.db.accounts import ApiToken, Membership, User
from tcplens.errors import InvalidInput, NotFound
from tcplens.services import accounts, credentials
from tcplens.services.access import (
    DEFAULT_TOKEN_SCOPES,
    SCOPES,
    InsufficientScope,
    Scope,
    Viewer,
)

# last_used_at is written at most this often per token: one UPDATE a minute, not one a request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenNotFound(NotFound):
    code = "token_not_found"


@dataclass(frozen=True)
class IssuedToken:
    id: uuid.UUID
    token: str  # the only time the raw token exists outside the client
    workspace_id: uuid.UUID
    name: str
    scopes: tuple[Scope, ...]


@dataclass(frozen=True)
class TokenHolder:
    user: User
    workspace_id: uuid.UUID
    token_id: uuid.UUID
    scopes: frozenset[Scope]


def checked_scopes(requested: Iterable[str] | None) -> tuple[Scope, ...]:
    """The scopes asked for, known and without repeats, in SCOPES' order (None: the defaults)."""
    if requested is None:
        return DEFAULT_TOKEN_SCOPES
    wanted = set(requested)
    unknown = sorted(wanted - set(SCOPES))
    if unknown:
        raise InvalidInput(
            f"unknown scope {unknown[0]!r}; scopes are {', '.join(SCOPES)}", field="scopes"
        )
    if not wanted:
        raise InvalidInput("a token needs at least one scope", field="scopes")
    return tuple(s for s in SCOPES if s in wanted)


def issue(
    session: Session,
    user_id: uuid.UUID,
    workspace_id: uuid.UUID,
    name: str,
    scopes: tuple[Scope, ...] = DEFAULT_TOKEN_SCOPES,
) -> IssuedToken:
    accounts.require_member(session, user_id, workspace_id)
    raw = credentials.new_api_token()
    row = ApiToken(
        user_id=user_id,
        workspace_id=workspace_id,
        name=accounts.display_name(name, field="name")[:200] or "token",
        display_prefix=raw[:12],
        token_hash=credentials.token_digest(raw),
        scopes=list(scopes),
    )
    session.add(row)
    session.commit()
    return IssuedToken(
        id=row.id, token=raw, workspace_id=workspace_id, name=row.name, scopes=scopes
    )


def issue_for(
    session: Session,
    viewer: Viewer,
    workspace_id: uuid.UUID,
    name: str,
    requested: Iterable[str] | None,
) -> IssuedToken:
    """A token made by ``viewer`` (a session, or a token with the ``admin`` scope): never with a
    scope the viewer itself lacks."""
    assert viewer.user_id is not None
    scopes = checked_scopes(requested)
    beyond = [s for s in scopes if s not in viewer.scopes]
    if beyond:
        raise InsufficientScope(
            f"a token cannot grant the {beyond[0]!r} scope, which it lacks itself", scope=beyond[0]
        )
    return issue(session, viewer.user_id, workspace_id, name, scopes)


def _visible_to(viewer: Viewer) -> list[ColumnElement[bool]]:
    """The tokens a viewer may see: its user's, and for a token only its own workspace's."""
    assert viewer.user_id is not None
    conditions: list[ColumnElement[bool]] = [ApiToken.user_id == viewer.user_id]
    if viewer.via == "token":
        conditions.append(ApiToken.workspace_id.in_(viewer.workspace_ids))
    return conditions


def list_for(session: Session, viewer: Viewer) -> list[ApiToken]:
    return list(
        session.scalars(select(ApiToken).where(*_visible_to(viewer)).order_by(ApiToken.created_at))
    )


def revoke(session: Session, viewer: Viewer, token_id: uuid.UUID) -> None:
    row = session.scalar(select(ApiToken).where(ApiToken.id == token_id, *_visible_to(viewer)))
    # A token the viewer may not see is reported as missing, like one that never existed.
    if row is None:
        raise TokenNotFound("no such token")
    if row.revoked_at is None:
        row.revoked_at = datetime.now(UTC)
        session.commit()


def holder_of(session: Session, raw: str) -> TokenHolder | None:
    """Who a presented token belongs to, or None when it is unknown or revoked."""
    if not raw.startswith(credentials.API_TOKEN_PREFIX) or len(raw) > 200:
        return None
    # One query: the token, its user, and that the user still belongs to the token's workspace
    # (they may have left since it was issued).
    row = session.execute(
        select(ApiToken.id, ApiToken.workspace_id, ApiToken.scopes, User)
        .join(User, User.id == ApiToken.user_id)
        .join(
            Membership,
            (Membership.user_id == ApiToken.user_id)
            & (Membership.workspace_id == ApiToken.workspace_id),
        )
        .where(ApiToken.token_hash == credentials.token_digest(raw), ApiToken.revoked_at.is_(None))
    ).one_or_none()
    if row is None:
        return None
    _mark_used(session, row.id)
    return TokenHolder(
        user=row.User,
        workspace_id=row.workspace_id,
        token_id=row.id,
        scopes=frozenset(s for s in SCOPES if s in row.scopes),
    )


def _mark_used(session: Session, token_id: uuid.UUID) -> None:
    """Set last_used_at, unless it was set less than LAST_USED_RESOLUTION ago (a script polling
    every half second costs one write a minute, not two a second)."""
    session.execute(
        update(ApiToken)
        .where(
            ApiToken.id == token_id,
            or_(
                ApiToken.last_used_at.is_(None),
                ApiToken.last_used_at < func.now() - LAST_USED_RESOLUTION,
            ),
        )
        .values(last_used_at=func.now())
    )
    session.commit()
