"""API token scopes; share links serve the original file only when allowed

Tokens issued before scopes get the default ones (captures:read, captures:write): no token or
member administration. Links made before the choice existed served the file, and keep doing so.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "api_tokens",
        sa.Column(
            "scopes",
            postgresql.ARRAY(sa.String(length=32)),
            server_default=sa.text("'{captures:read,captures:write}'"),
            nullable=False,
        ),
    )
    op.add_column(
        "share_links",
        sa.Column("allow_download", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    op.execute("UPDATE share_links SET allow_download = true")


def downgrade() -> None:
    op.drop_column("share_links", "allow_download")
    op.drop_column("api_tokens", "scopes")
