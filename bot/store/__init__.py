"""Durable state behind a small protocol (bot.store.base.Store); SQLite is the implementation."""

from bot.store.base import InboxRow, OutboxRow, QuestionRow, SessionRow, Store
from bot.store.sqlite import SqliteStore

__all__ = ["InboxRow", "OutboxRow", "QuestionRow", "SessionRow", "SqliteStore", "Store"]
