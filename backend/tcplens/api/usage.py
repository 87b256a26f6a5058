"""``/api/v1/workspaces/{id}/usage``: what a workspace stores against its storage quota."""

from __future__ import annotations

import uuid

from fastapi import APIRouter

from tcplens.api.auth import ViewerDep
from tcplens.api.deps import SessionDep, SettingsDep
from tcplens.api.schemas import WorkspaceUsage
from tcplens.services import accounts, storage_quota

router = APIRouter(prefix="/workspaces", tags=["workspaces"])


@router.get(
    "/{workspace_id}/usage",
    response_model=WorkspaceUsage,
    summary="The bytes the workspace's captures take, and its quota",
)
def workspace_usage(
    session: SessionDep, settings: SettingsDep, viewer: ViewerDep, workspace_id: uuid.UUID
) -> WorkspaceUsage:
    if not viewer.reads_workspace(workspace_id):
        raise accounts.WorkspaceNotFound("no such workspace")
    usage = storage_quota.usage(session, workspace_id, settings.workspace_quota_bytes)
    return WorkspaceUsage(
        used_bytes=usage.used_bytes, quota_bytes=usage.quota_bytes, captures=usage.captures
    )
