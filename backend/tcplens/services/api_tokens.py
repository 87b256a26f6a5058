"""API tokens for scripts: prefixed ``tcpl_``, shown once, stored hashed, scoped to a workspace,
revocable. Sent as ``Authorization: Bearer``."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from tcplens.db.accounts import ApiToken, Membership, User
from tcplens.errors import NotFound
from tcplens.services import accounts, credentials


class TokenNotFound(NotFound):
    code = "token_not_found"


@dataclass(frozen=True)
class IssuedToken:
    id: uuid.UUID
    token: str  # the only time the raw token exists outside the client
    workspace_id: uuid.UUID
    name: str


@dataclass(frozen=True)
class TokenHolder:
    user: User
    workspace_id: uuid.UUID
    token_id: uuid.UUID


def issue(session: Session, user_id: uuid.UUID, workspace_id: uuid.UUID, name: str) -> IssuedToken:
    accounts.require_member(session, user_id, workspace_id)
    raw = credentials.new_api_token()
    row = ApiToken(
        user_id=user_id,
        workspace_id=workspace_id,
        name=accounts.display_name(name, field="name")[:200] or "token",
        display_prefix=raw[:12],
        token_hash=credentials.token_digest(raw),
    )
    session.add(row)
    session.commit()
    return IssuedToken(id=row.id, token=raw, workspace_id=workspace_id, name=row.name)


def list_for(session: Session, user_id: uuid.UUID) -> list[ApiToken]:
    return list(
        session.scalars(
            select(ApiToken).where(ApiToken.user_id == user_id).order_by(ApiToken.created_at)
        )
    )


def revoke(session: Session, user_id: uuid.UUID, token_id: uuid.UUID) -> None:
    row = session.get(ApiToken, token_id)
    # Another user's token is reported as missing, like one that never existed.
    if row is None or row.user_id != user_id:
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
        select(ApiToken.id, ApiToken.workspace_id, User)
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
    return TokenHolder(user=row.User, workspace_id=row.workspace_id, token_id=row.id)
