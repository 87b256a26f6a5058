"""Users, browser sessions and workspaces with their members.

Every user gets a personal workspace at sign-up, of which they are the owner; an owner invites
other existing users by e-mail address. Login failures say the same thing for a missing account and
a wrong password.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from tcplens.db.accounts import BrowserSession, Membership, User, Workspace
from tcplens.db.captures import Capture, ShareLink
from tcplens.errors import Conflict, InvalidInput, NotAuthenticated, NotFound, PermissionDenied
from tcplens.services import credentials

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024  # argon2 hashes anything, but a megabyte "password" is a DoS


class EmailTaken(Conflict):
    code = "email_taken"


class BadCredentials(NotAuthenticated):
    code = "bad_credentials"


class UserNotFound(NotFound):
    code = "user_not_found"


class WorkspaceNotFound(NotFound):
    code = "workspace_not_found"


class NotWorkspaceOwner(PermissionDenied):
    code = "not_workspace_owner"


class WeakPassword(InvalidInput):
    code = "weak_password"


def normalize_email(email: str) -> str:
    email = email.strip().lower()
    local, _, domain = email.partition("@")
    # isprintable: no control or format characters (PostgreSQL text cannot even hold NUL).
    if (
        not local
        or "." not in domain
        or len(email) > 320
        or any(c.isspace() or not c.isprintable() for c in email)
    ):
        raise InvalidInput(f"{email!r} is not an e-mail address", field="email")
    return email


def display_name(name: str, *, field: str) -> str:
    """A name people gave (workspace, token), stripped. Control and format characters are
    refused: PostgreSQL text cannot hold NUL, and a bidi override would disguise the name."""
    name = name.strip()
    if not name.isprintable():
        raise InvalidInput(f"the {field} contains control characters", field=field)
    return name


def create_user(session: Session, email: str, password: str) -> User:
    """A new user with a personal workspace they own (committed)."""
    email = normalize_email(email)
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        raise WeakPassword(
            f"a password needs {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters",
            field="password",
        )
    user = User(email=email, password_hash=credentials.hash_password(password))
    workspace = Workspace(name=email)
    session.add_all([user, workspace])
    try:
        session.flush()
    except IntegrityError as exc:
        session.rollback()
        raise EmailTaken(f"an account for {email} already exists") from exc
    session.add(Membership(workspace_id=workspace.id, user_id=user.id, role="owner"))
    session.commit()
    return user


def user_by_email(session: Session, email: str) -> User:
    user = session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None:
        raise UserNotFound(f"no user with the e-mail address {email.strip().lower()}")
    return user


def authenticate(session: Session, email: str, password: str) -> User:
    try:
        email = normalize_email(email)
    except InvalidInput:
        email = ""
    user = session.scalar(select(User).where(User.email == email)) if email else None
    # verify_password runs argon2 even without a user: same cost either way.
    if not credentials.verify_password(user.password_hash if user else None, password[:1024]):
        raise BadCredentials("wrong e-mail address or password")
    assert user is not None
    return user


def start_session(session: Session, user: User, max_age_s: int) -> str:
    """A new browser session; the raw token is returned once and only its digest is stored."""
    token = credentials.new_session_token()
    session.add(
        BrowserSession(
            token_hash=credentials.token_digest(token),
            user_id=user.id,
            expires_at=datetime.now(UTC) + timedelta(seconds=max_age_s),
        )
    )
    session.commit()
    return token


def user_of_session(session: Session, token: str) -> User | None:
    return session.scalar(
        select(User)
        .join(BrowserSession, BrowserSession.user_id == User.id)
        .where(
            BrowserSession.token_hash == credentials.token_digest(token),
            BrowserSession.expires_at > func.now(),
        )
    )


def purge_expired_sessions(session: Session) -> int:
    """Delete the rows of sessions past their expiry (they no longer open anything); the
    number deleted."""
    result = session.execute(delete(BrowserSession).where(BrowserSession.expires_at <= func.now()))
    session.commit()
    return int(result.rowcount)  # type: ignore[attr-defined]


def end_session(session: Session, token: str) -> None:
    session.execute(
        delete(BrowserSession).where(BrowserSession.token_hash == credentials.token_digest(token))
    )
    session.commit()


@dataclass(frozen=True)
class WorkspaceView:
    id: uuid.UUID
    name: str
    role: str


def workspaces_of(session: Session, user_id: uuid.UUID) -> list[WorkspaceView]:
    rows = session.execute(
        select(Workspace.id, Workspace.name, Membership.role)
        .join(Membership, Membership.workspace_id == Workspace.id)
        .where(Membership.user_id == user_id)
        .order_by(Workspace.created_at, Workspace.id)
    ).all()
    return [WorkspaceView(id=r.id, name=r.name, role=r.role) for r in rows]


def role_in(session: Session, user_id: uuid.UUID, workspace_id: uuid.UUID) -> str | None:
    return session.scalar(
        select(Membership.role).where(
            Membership.user_id == user_id, Membership.workspace_id == workspace_id
        )
    )


def create_workspace(session: Session, owner_id: uuid.UUID, name: str) -> WorkspaceView:
    name = display_name(name, field="name")
    if not 1 <= len(name) <= 200:
        raise InvalidInput("a workspace name needs 1 to 200 characters", field="name")
    workspace = Workspace(name=name)
    session.add(workspace)
    session.flush()
    session.add(Membership(workspace_id=workspace.id, user_id=owner_id, role="owner"))
    session.commit()
    return WorkspaceView(id=workspace.id, name=name, role="owner")


def workspace_by_name(session: Session, user_id: uuid.UUID, name: str) -> WorkspaceView:
    for workspace in workspaces_of(session, user_id):
        if workspace.name == name:
            return workspace
    raise WorkspaceNotFound(f"no workspace named {name!r} for this user")


@dataclass(frozen=True)
class MemberView:
    user_id: uuid.UUID
    email: str
    role: str


def members_of(session: Session, workspace_id: uuid.UUID) -> list[MemberView]:
    rows = session.execute(
        select(User.id, User.email, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id)
        .order_by(Membership.created_at, User.email)
    ).all()
    return [MemberView(user_id=r.id, email=r.email, role=r.role) for r in rows]


def require_member(session: Session, user_id: uuid.UUID, workspace_id: uuid.UUID) -> str:
    """The caller's role; a workspace they do not belong to is reported as missing."""
    role = role_in(session, user_id, workspace_id)
    if role is None:
        raise WorkspaceNotFound("no such workspace")
    return role


def invite_member(
    session: Session, owner_id: uuid.UUID, workspace_id: uuid.UUID, email: str
) -> MemberView:
    if require_member(session, owner_id, workspace_id) != "owner":
        raise NotWorkspaceOwner("only the workspace's owner invites members")
    user = user_by_email(session, email)
    if role_in(session, user.id, workspace_id) is None:
        session.add(Membership(workspace_id=workspace_id, user_id=user.id, role="member"))
        session.commit()
    return MemberView(
        user_id=user.id, email=user.email, role=role_in(session, user.id, workspace_id) or "member"
    )


def remove_member(
    session: Session, owner_id: uuid.UUID, workspace_id: uuid.UUID, user_id: uuid.UUID
) -> None:
    if require_member(session, owner_id, workspace_id) != "owner":
        raise NotWorkspaceOwner("only the workspace's owner removes members")
    if user_id == owner_id:
        raise InvalidInput("the owner cannot leave their own workspace")
    session.execute(
        delete(Membership).where(
            Membership.workspace_id == workspace_id, Membership.user_id == user_id
        )
    )
    # The share policy (services/sharing.py): the links they made to this workspace's captures
    # go with them (their API tokens for it stop at once: api_tokens.holder_of checks membership).
    session.execute(
        update(ShareLink)
        .where(
            ShareLink.created_by == user_id,
            ShareLink.revoked_at.is_(None),
            ShareLink.capture_id.in_(
                select(Capture.id).where(Capture.workspace_id == workspace_id)
            ),
        )
        .values(revoked_at=func.now())
    )
    session.commit()
