"""Where the chats are kept: a SQLite file, or PostgreSQL shared by several processes."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from bot.settings.fields import SettingsGroup, alias


class StoreSettings(SettingsGroup):
    section = "The store"

    db_path: Path = Field(
        default=Path("./data/bot.sqlite3"), validation_alias=alias("BOT_DB_PATH"),
        description="The SQLite file, the default store (its folder is created).",
    )
    db_url: str | None = Field(
        default=None, validation_alias=alias("BOT_DB_URL"),
        description=(
            "PostgreSQL instead of SQLite, `postgresql://user:password@host:5432/database` (asyncpg "
            "reads it: `?sslmode=require` works). Wins over `BOT_DB_PATH`; several processes may "
            "share the database."
        ),
    )
    db_pool_max: int = Field(
        default=20, ge=2, le=200, validation_alias=alias("BOT_DB_POOL_MAX"),
        description="PostgreSQL connections per process, all opened at start and kept.",
    )
    lease_s: float = Field(
        default=15.0, ge=0.5, le=600, validation_alias=alias("BOT_LEASE_S"),
        description=(
            "PostgreSQL: how long a process's hold on a chat lasts unless renewed (renewed every "
            "third of it). A dead process's chats move to another after about this long."
        ),
    )

    @field_validator("db_url", mode="before")
    @classmethod
    def _postgres_url(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip()
            if not v:
                return None
            if not v.startswith(("postgresql://", "postgres://")):
                raise ValueError("must be a postgresql://user@host:port/database URL (SQLite takes BOT_DB_PATH)")
        return v

    @property
    def store_kind(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.db_url else "sqlite"
