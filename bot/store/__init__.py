"""Durable state behind a small protocol (bot.store.base.Store): SqliteStore, the default, and
PostgresStore (bot.store.postgres.store, imported where BOT_DB_URL selects it: asyncpg loads only then)."""

from bot.store.base import InboxRow, OutboxRow, QuestionRow, SessionRow, Store
from bot.store.sqlite.store import SqliteStore

__all__ = ["InboxRow", "OutboxRow", "QuestionRow", "SessionRow", "SqliteStore", "Store"]
