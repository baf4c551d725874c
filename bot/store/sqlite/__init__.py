"""SqliteStore, the embedded default: one writer thread committing in groups (writer, writes),
read-only connections beside it (reader), each on a thread of its own (thread)."""

from bot.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
