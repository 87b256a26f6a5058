"""app_meta: facts about this installation, starting with its instance_id

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "app_meta",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_app_meta")),
    )
    # gen_random_uuid() is built into PostgreSQL since 13.
    op.execute("INSERT INTO app_meta (key, value) VALUES ('instance_id', gen_random_uuid()::text)")


def downgrade() -> None:
    op.drop_table("app_meta")
