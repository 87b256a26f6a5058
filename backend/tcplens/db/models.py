"""The tables. Import every model module here so Alembic's autogenerate sees the whole schema."""

from __future__ import annotations

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from tcplens.db.base import Base


class AppMeta(Base):
    """Facts about this installation as key/value pairs (e.g. ``instance_id``, set by the first
    migration, which names this installation in share links and logs)."""

    __tablename__ = "app_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


# The service's tables (issue 7).
from tcplens.db import accounts, captures  # noqa: E402, F401
