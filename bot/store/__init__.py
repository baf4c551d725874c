"""Durable state behind a small protocol (bot.store.base.Store): SqliteStore, the default, and
PostgresStore (bot.store.postgres.store, imported where BOT_DB_URL selects it: asyncpg loads only then).

What both share is written once: the rows (rows), the errors (errors), every read as SQL both
run (reads) and every write as a name and its record (writes), which each database carries out
in its own language (sqlite/writes.py and run_writes.py; migrations/postgres/0014)."""

from bot.store.base import InboxRow, OutboxRow, QuestionRow, SessionRow, Store
from bot.store.sqlite.store import SqliteStore

__all__ = ["InboxRow", "OutboxRow", "QuestionRow", "SessionRow", "SqliteStore", "Store"]
