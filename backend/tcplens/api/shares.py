"""``/api/v1/captures/{id}/shares``: create, list and revoke a capture's share links."""

from __future__ import annotations

import uuid

from fastapi import APIRouter, Request, Response, status

from tcplens.api.auth import ViewerDep
from tcplens.api.deps import SessionDep, SettingsDep
from tcplens.api.schemas import ShareCreate, ShareLinkIssued, ShareLinkOut
from tcplens.db.captures import ShareLink
from tcplens.services import sharing

router = APIRouter(prefix="/captures/{capture_id}/shares", tags=["sharing"])

# Where the SPA shows a shared capture; the API mirror is /api/v1/shared/{token}.
SHARE_PAGE = "/shared/{token}"


def _out(link: ShareLink) -> ShareLinkOut:
    return ShareLinkOut(
        id=link.id,
        capture_id=link.capture_id,
        created_at=link.created_at,
        expires_at=link.expires_at,
        revoked_at=link.revoked_at,
    )


@router.post("", response_model=ShareLinkIssued, status_code=status.HTTP_201_CREATED)
def create_share_link(
    body: ShareCreate,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    viewer: ViewerDep,
    capture_id: uuid.UUID,
) -> ShareLinkIssued:
    issued = sharing.create(session, viewer, capture_id, body.expires_in_s)
    base = (settings.public_url or str(request.base_url)).rstrip("/")
    return ShareLinkIssued(
        **_out(issued.link).model_dump(),
        token=issued.token,
        url=base + SHARE_PAGE.format(token=issued.token),
    )


@router.get("", response_model=list[ShareLinkOut])
def list_share_links(
    session: SessionDep, viewer: ViewerDep, capture_id: uuid.UUID
) -> list[ShareLinkOut]:
    return [_out(link) for link in sharing.links_of(session, viewer, capture_id)]


@router.delete("/{link_id}", status_code=status.HTTP_204_NO_CONTENT)
def revoke_share_link(
    session: SessionDep, viewer: ViewerDep, capture_id: uuid.UUID, link_id: uuid.UUID
) -> Response:
    sharing.revoke(session, viewer, capture_id, link_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
