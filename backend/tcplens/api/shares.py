"""``/api/v1/captures/{id}/shares``: create, list and revoke a capture's share links;
``/api/v1/workspaces/{id}/shares``: every link of a workspace, for its owners to review."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request, Response, status

from tcplens.api.auth import AdminDep, ReaderDep, WriterDep
from tcplens.api.deps import SessionDep, SettingsDep
from tcplens.api.schemas import ShareCreate, ShareLinkIssued, ShareLinkOut, WorkspaceShareLinkOut
from tcplens.services import sharing

router = APIRouter(prefix="/captures/{capture_id}/shares", tags=["sharing"])
workspace_router = APIRouter(prefix="/workspaces/{workspace_id}/shares", tags=["sharing"])

# Where the SPA shows a shared capture; the API mirror is /api/v1/shared/{token}.
SHARE_PAGE = "/shared/{token}"


def _out(view: sharing.ShareLinkView) -> ShareLinkOut:
    link = view.link
    return ShareLinkOut(
        id=link.id,
        capture_id=link.capture_id,
        created_at=link.created_at,
        expires_at=link.expires_at,
        revoked_at=link.revoked_at,
        allow_download=link.allow_download,
        created_by=view.created_by,
    )


@router.post("", response_model=ShareLinkIssued, status_code=status.HTTP_201_CREATED)
def create_share_link(
    body: ShareCreate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    viewer: WriterDep,
    capture_id: uuid.UUID,
) -> ShareLinkIssued:
    issued = sharing.create(
        session, viewer, capture_id, body.expires_in_s, allow_download=body.allow_download
    )
    base = (settings.public_url or str(request.base_url)).rstrip("/")
    return ShareLinkIssued(
        **_out(issued.view).model_dump(),
        token=issued.token,
        url=base + SHARE_PAGE.format(token=issued.token),
    )


@router.get("", response_model=list[ShareLinkOut])
def list_share_links(
    session: SessionDep, viewer: ReaderDep, capture_id: uuid.UUID
) -> list[ShareLinkOut]:
    return [_out(view) for view in sharing.links_of(session, viewer, capture_id)]


@router.delete("/{link_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_share_link(
    session: SessionDep, viewer: WriterDep, capture_id: uuid.UUID, link_id: uuid.UUID
) -> Response:
    sharing.revoke(session, viewer, capture_id, link_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@workspace_router.get(
    "",
    response_model=list[WorkspaceShareLinkOut],
    summary="Every share link to the workspace's captures (owners only), oldest first",
)
def list_workspace_share_links(
    session: SessionDep, viewer: AdminDep, workspace_id: uuid.UUID
) -> list[WorkspaceShareLinkOut]:
    return [
        WorkspaceShareLinkOut(**_out(view).model_dump(), filename=view.filename)
        for view in sharing.links_of_workspace(session, viewer, workspace_id)
    ]
