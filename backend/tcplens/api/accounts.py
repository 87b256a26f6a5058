"""Sign-up, login, logout; workspaces and members; API tokens."""

from __future__ import annotations

import contextlib
import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Request, Response, status

from tcplens.api.auth import (
    AdminDep,
    BrowserDep,
    ReaderDep,
    ViewerDep,
    clear_session_cookies,
    session_cookie,
    set_session_cookies,
)
from tcplens.api.deps import SessionDep, SettingsDep
from tcplens.api.rate_limit import bucket_of, client_of
from tcplens.api.schemas import (
    Credentials,
    MemberInvite,
    MemberOut,
    PasswordChange,
    SessionOut,
    SignUpAccepted,
    TokenCreate,
    TokenIssued,
    TokenOut,
    UserOut,
    WorkspaceCreate,
    WorkspaceOut,
)
from tcplens.db.accounts import ApiToken, User
from tcplens.errors import NotAuthenticated
from tcplens.services import accounts, api_tokens, credentials
from tcplens.services.access import SCOPES, ReadOnlyAccess, Viewer
from tcplens.settings import Settings

auth_router = APIRouter(prefix="/auth", tags=["auth"])
workspaces_router = APIRouter(prefix="/workspaces", tags=["workspaces"])
tokens_router = APIRouter(prefix="/tokens", tags=["tokens"])


# Attempts on one account at once before the hourly rate applies (settings'
# login_attempts_per_account_per_hour): a user mistyping a few times is never held back.
LOGIN_BURST_PER_ACCOUNT = 10


def _limit_sign_in(request: Request, settings: Settings, email: str | None = None) -> None:
    """Per client (its address: ``rate_limit.client_of``) and, for a login, per account, so
    attempts spread over many addresses still meet a limit (OWASP ASVS 5.0 V6.3.1)."""
    per_client = bucket_of(request, "login_bucket", settings.login_attempts_per_minute)
    per_client.take(client_of(request), "sign-in attempts")
    if email is not None:
        per_account = bucket_of(
            request,
            "account_login_bucket",
            settings.login_attempts_per_account_per_hour / 60.0,
            burst=LOGIN_BURST_PER_ACCOUNT,
        )
        per_account.take(email.strip().lower(), "sign-in attempts for this account")


def _session_out(session: SessionDep, user: User, csrf: str | None) -> SessionOut:
    return SessionOut(
        user=UserOut(id=user.id, email=user.email),
        workspaces=[
            WorkspaceOut(id=w.id, name=w.name, role=w.role)
            for w in accounts.workspaces_of(session, user.id)
        ],
        csrf_token=csrf,
    )


SIGN_UP_ANSWER = (
    "Unless this address already had an account, it has one now with this password: sign in."
)


@auth_router.post(
    "/signup",
    response_model=SignUpAccepted,
    status_code=status.HTTP_202_ACCEPTED,
    summary="Create an account, then sign in: the same answer whether or not the address has one",
)
def sign_up(
    body: Credentials, request: Request, session: SessionDep, settings: SettingsDep
) -> SignUpAccepted:
    """An address that already has an account gets the same answer, at the same cost (the
    password is checked and hashed either way), and that account is left as it was: the answer
    never says which addresses have accounts. No session starts: whoever signs up signs in next,
    which only the holder of the account's password can."""
    _limit_sign_in(request, settings)
    with contextlib.suppress(accounts.EmailTaken):
        accounts.create_user(session, body.email, body.password)
    return SignUpAccepted(detail=SIGN_UP_ANSWER)


@auth_router.post("/login", response_model=SessionOut)
def log_in(
    body: Credentials,
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
) -> SessionOut:
    _limit_sign_in(request, settings, body.email)
    user = accounts.authenticate(session, body.email, body.password)
    token = accounts.start_session(session, user, settings.session_max_age_s)
    return _session_out(session, user, set_session_cookies(response, settings, token))


@auth_router.post("/logout", status_code=status.HTTP_204_NO_CONTENT)
def log_out(
    request: Request, session: SessionDep, settings: SettingsDep, viewer: ViewerDep
) -> Response:
    # ViewerDep has checked the CSRF token: a cross-site page cannot sign the user out.
    cookie = session_cookie(request, settings)
    if cookie:
        accounts.end_session(session, cookie)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    clear_session_cookies(response, settings)
    return response


@auth_router.post(
    "/password",
    response_model=SessionOut,
    summary="Change the password; every other session ends, this one gets a new id",
)
def change_password(
    body: PasswordChange,
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    viewer: BrowserDep,
) -> SessionOut:
    user = session.get(User, viewer.user_id)
    if user is None:
        raise NotAuthenticated("sign in first")
    # A stolen session must not become a way to guess the password: the per-account limit.
    _limit_sign_in(request, settings, user.email)
    accounts.change_password(session, user, body.current_password, body.new_password)
    token = accounts.start_session(session, user, settings.session_max_age_s)
    return _session_out(session, user, set_session_cookies(response, settings, token))


@auth_router.post(
    "/logout-everywhere",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Sign out everywhere: every browser session of this user ends, this one too",
)
def log_out_everywhere(settings: SettingsDep, session: SessionDep, viewer: BrowserDep) -> Response:
    assert viewer.user_id is not None
    accounts.end_all_sessions(session, viewer.user_id)
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    clear_session_cookies(response, settings)
    return response


@auth_router.get("/me", response_model=SessionOut, summary="Who is signed in")
def me(
    request: Request, session: SessionDep, settings: SettingsDep, viewer: ViewerDep
) -> SessionOut:
    user = session.get(User, viewer.user_id)
    if user is None:
        raise NotAuthenticated("sign in first")
    cookie = session_cookie(request, settings)
    csrf = None
    if viewer.via == "session" and cookie:
        csrf = credentials.csrf_token_for(cookie, settings.secret_key.get_secret_value())
    out = _session_out(session, user, csrf)
    if viewer.via == "token":
        # A token sees only its own workspace.
        out.workspaces = [w for w in out.workspaces if w.id in viewer.workspace_ids]
    return out


def _user_id(viewer: Viewer) -> uuid.UUID:
    if viewer.user_id is None:
        raise ReadOnlyAccess("a share link is read-only")
    return viewer.user_id


def _visible_workspace(viewer: Viewer, workspace_id: uuid.UUID) -> None:
    if workspace_id not in viewer.workspace_ids:
        raise accounts.WorkspaceNotFound("no such workspace")


@workspaces_router.get("", response_model=list[WorkspaceOut])
def list_workspaces(session: SessionDep, viewer: ViewerDep) -> list[WorkspaceOut]:
    return [
        WorkspaceOut(id=w.id, name=w.name, role=w.role)
        for w in accounts.workspaces_of(session, _user_id(viewer))
        if w.id in viewer.workspace_ids
    ]


@workspaces_router.post("", response_model=WorkspaceOut, status_code=status.HTTP_201_CREATED)
def create_workspace(body: WorkspaceCreate, session: SessionDep, viewer: ViewerDep) -> WorkspaceOut:
    if viewer.via != "session":
        raise ReadOnlyAccess("workspaces are created from a browser session")
    w = accounts.create_workspace(session, _user_id(viewer), body.name)
    return WorkspaceOut(id=w.id, name=w.name, role="owner")


@workspaces_router.get("/{workspace_id}/members", response_model=list[MemberOut])
def list_members(
    session: SessionDep, viewer: ReaderDep, workspace_id: uuid.UUID
) -> list[MemberOut]:
    _visible_workspace(viewer, workspace_id)
    accounts.require_member(session, _user_id(viewer), workspace_id)
    return [_member_out(m) for m in accounts.members_of(session, workspace_id)]


def _member_out(m: accounts.MemberView) -> MemberOut:
    return MemberOut(user_id=m.user_id, email=m.email, role=m.role, status=m.status)


@workspaces_router.post(
    "/{workspace_id}/members",
    response_model=MemberOut,
    status_code=status.HTTP_201_CREATED,
    summary="Invite an e-mail address (the same answer whether or not it has an account)",
)
def invite_member(
    body: MemberInvite, session: SessionDep, viewer: AdminDep, workspace_id: uuid.UUID
) -> MemberOut:
    _visible_workspace(viewer, workspace_id)
    return _member_out(accounts.invite_member(session, _user_id(viewer), workspace_id, body.email))


@workspaces_router.delete(
    "/{workspace_id}/invitations/{email}",
    status_code=status.HTTP_204_NO_CONTENT,
    summary="Cancel an invitation that was not taken up yet",
)
def cancel_invitation(
    session: SessionDep,
    viewer: AdminDep,
    workspace_id: uuid.UUID,
    email: Annotated[str, Path(max_length=320)],
) -> Response:
    _visible_workspace(viewer, workspace_id)
    accounts.cancel_invitation(session, _user_id(viewer), workspace_id, email)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@workspaces_router.delete(
    "/{workspace_id}/members/{user_id}", status_code=status.HTTP_204_NO_CONTENT
)
def remove_member(
    session: SessionDep, viewer: AdminDep, workspace_id: uuid.UUID, user_id: uuid.UUID
) -> Response:
    _visible_workspace(viewer, workspace_id)
    accounts.remove_member(session, _user_id(viewer), workspace_id, user_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _token_out(row: ApiToken) -> TokenOut:
    return TokenOut(
        id=row.id,
        name=row.name,
        workspace_id=row.workspace_id,
        display_prefix=row.display_prefix,
        scopes=[s for s in SCOPES if s in row.scopes],
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )


@tokens_router.get(
    "",
    response_model=list[TokenOut],
    summary="Your API tokens (never the secret); to a token, only its workspace's",
)
def list_tokens(session: SessionDep, viewer: AdminDep) -> list[TokenOut]:
    return [_token_out(t) for t in api_tokens.list_for(session, viewer)]


@tokens_router.post(
    "",
    response_model=TokenIssued,
    status_code=status.HTTP_201_CREATED,
    summary="A new API token; the token is shown only in this response",
)
def create_token(body: TokenCreate, session: SessionDep, viewer: AdminDep) -> TokenIssued:
    workspace_id = body.workspace_id or viewer.default_workspace_id
    if workspace_id is None:
        raise accounts.WorkspaceNotFound("no such workspace")
    _visible_workspace(viewer, workspace_id)
    issued = api_tokens.issue_for(session, viewer, workspace_id, body.name, body.scopes)
    row = session.get(ApiToken, issued.id)
    assert row is not None
    return TokenIssued(**_token_out(row).model_dump(), token=issued.token)


@tokens_router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_token(session: SessionDep, viewer: AdminDep, token_id: uuid.UUID) -> Response:
    api_tokens.revoke(session, viewer, token_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
