"""Users, browser sessions and workspaces with their members.

Every user gets a personal workspace at sign-up, of which they are the owner; an owner invites
people by e-mail address, with the same answer whether or not the address has an account (an
``Invitation``, which becomes a membership when that account's session is next used). Sign-up
(``api.accounts.sign_up``) answers the same for a taken address; login failures say the same thing
for a missing account and a wrong password. Passwords follow ``password_policy``.

A browser session ends at its absolute expiry, after ``idle_timeout_s`` without a request
(OWASP ASVS 5.0 V7.3.1), at logout, when the user signs out everywhere, and when the password
changes (every session but the one that changed it, which gets a new id: V7.4.3, V7.2.4).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from sqlalchemy import delete, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session
from sqlalchemy.sql import ColumnElement

from tcplens.db.accounts import BrowserSession, Invitation, Membership, User, Workspace
from tcplens.db.captures import Capture, ShareLink
from tcplens.errors import Conflict, InvalidInput, NotAuthenticated, NotFound, PermissionDenied
from tcplens.services import credentials, password_policy

# last_seen_at is written at most this often per session (the idle timeout is far longer).
LAST_SEEN_RESOLUTION = timedelta(minutes=1)


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


class WrongPassword(PermissionDenied):
    code = "wrong_password"


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
    password_policy.check_new_password(password, email=email)
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
    if not credentials.verify_password(
        user.password_hash if user else None, password[: password_policy.MAX_LENGTH]
    ):
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
    claim_invitations(session, user)
    session.commit()
    return token


def claim_invitations(session: Session, user: User) -> None:
    """The invitations to the user's address become memberships (committed when there were
    any). Called with every use of a browser session, so an invitation takes effect at once."""
    claimed = session.scalars(
        delete(Invitation).where(Invitation.email == user.email).returning(Invitation.workspace_id)
    ).all()
    if not claimed:
        return
    session.execute(
        insert(Membership)
        .values([{"workspace_id": w, "user_id": user.id, "role": "member"} for w in claimed])
        .on_conflict_do_nothing()
    )
    session.commit()


def _live(idle_timeout_s: int) -> ColumnElement[bool]:
    return (BrowserSession.expires_at > func.now()) & (
        BrowserSession.last_seen_at > func.now() - timedelta(seconds=idle_timeout_s)
    )


def user_of_session(session: Session, token: str, idle_timeout_s: int) -> User | None:
    """The user of a live session (neither expired nor idle too long), which counts as seen."""
    digest = credentials.token_digest(token)
    user = session.scalar(
        select(User)
        .join(BrowserSession, BrowserSession.user_id == User.id)
        .where(BrowserSession.token_hash == digest, _live(idle_timeout_s))
    )
    if user is not None:
        session.execute(
            update(BrowserSession)
            .where(
                BrowserSession.token_hash == digest,
                BrowserSession.last_seen_at < func.now() - LAST_SEEN_RESOLUTION,
            )
            .values(last_seen_at=func.now())
        )
        session.commit()
    return user


def purge_expired_sessions(session: Session, idle_timeout_s: int) -> int:
    """Delete the rows of sessions expired or idle too long (they no longer open anything);
    the number deleted."""
    result = session.execute(delete(BrowserSession).where(~_live(idle_timeout_s)))
    session.commit()
    return int(result.rowcount)  # type: ignore[attr-defined]


def end_all_sessions(session: Session, user_id: uuid.UUID) -> int:
    """Sign the user out everywhere: every browser session ends (API tokens are revoked one by
    one, on their page). The number ended."""
    result = session.execute(delete(BrowserSession).where(BrowserSession.user_id == user_id))
    session.commit()
    return int(result.rowcount)  # type: ignore[attr-defined]


def change_password(session: Session, user: User, current: str, new: str) -> None:
    """Set a new password after checking the current one (ASVS 5.0 V6.2.3), and end every
    session of the user: the caller starts a new one for the browser that asked."""
    if not credentials.verify_password(user.password_hash, current[: password_policy.MAX_LENGTH]):
        raise WrongPassword("the current password is not right")
    password_policy.check_new_password(new, email=user.email)
    user.password_hash = credentials.hash_password(new)
    session.execute(delete(BrowserSession).where(BrowserSession.user_id == user.id))
    session.commit()


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
    user_id: uuid.UUID | None  # None: invited, not joined yet
    email: str
    role: str
    status: Literal["member", "invited"] = "member"


def members_of(session: Session, workspace_id: uuid.UUID) -> list[MemberView]:
    """The members, then the pending invitations."""
    rows = session.execute(
        select(User.id, User.email, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.workspace_id == workspace_id)
        .order_by(Membership.created_at, User.email)
    ).all()
    invited = session.scalars(
        select(Invitation.email)
        .where(Invitation.workspace_id == workspace_id)
        .order_by(Invitation.created_at, Invitation.email)
    ).all()
    return [MemberView(user_id=r.id, email=r.email, role=r.role) for r in rows] + [
        MemberView(user_id=None, email=email, role="member", status="invited") for email in invited
    ]


def require_member(session: Session, user_id: uuid.UUID, workspace_id: uuid.UUID) -> str:
    """The caller's role; a workspace they do not belong to is reported as missing."""
    role = role_in(session, user_id, workspace_id)
    if role is None:
        raise WorkspaceNotFound("no such workspace")
    return role


def invite_member(
    session: Session, owner_id: uuid.UUID, workspace_id: uuid.UUID, email: str
) -> MemberView:
    """Invite an address: the same answer (``invited``) whether or not it has an account, so
    an owner cannot use invitations to find out who has one; an existing member is returned as
    the member they are (the owner sees them listed anyway)."""
    if require_member(session, owner_id, workspace_id) != "owner":
        raise NotWorkspaceOwner("only the workspace's owner invites members")
    email = normalize_email(email)
    member = session.execute(
        select(User.id, Membership.role)
        .join(Membership, Membership.user_id == User.id)
        .where(User.email == email, Membership.workspace_id == workspace_id)
    ).one_or_none()
    if member is not None:
        return MemberView(user_id=member.id, email=email, role=member.role)
    session.execute(
        insert(Invitation)
        .values(workspace_id=workspace_id, email=email, invited_by=owner_id)
        .on_conflict_do_nothing()
    )
    session.commit()
    return MemberView(user_id=None, email=email, role="member", status="invited")


def cancel_invitation(
    session: Session, owner_id: uuid.UUID, workspace_id: uuid.UUID, email: str
) -> None:
    if require_member(session, owner_id, workspace_id) != "owner":
        raise NotWorkspaceOwner("only the workspace's owner cancels invitations")
    session.execute(
        delete(Invitation).where(
            Invitation.workspace_id == workspace_id, Invitation.email == normalize_email(email)
        )
    )
    session.commit()


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
