"""SqliteReader: the store's read-only SQLite connection, on its own thread (bot.store.sqlite_thread).

WAL lets it read beside the writer (bot.store.writer) without waiting for a commit, and it sees
only what is committed. A read is a plain function of the connection, so a caller that needs
several queries at once (the chat's view: its inbox rows, session and questions) pays one hand-off
between the event loop and the thread, and reads them in one snapshot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from bot.store.sqlite_thread import SqliteThread

T = TypeVar("T")
Row = tuple[object, ...]
READER_CACHE_KIB = 256  # reads are by index; the OS caches the file; RSS stays flat as data grows


class SqliteReader:
    def __init__(self, path: str) -> None:
        self._thread = SqliteThread(path, "sqlite-reader",
                                    ("busy_timeout=5000", "query_only=ON", f"cache_size=-{READER_CACHE_KIB}"))

    async def open(self) -> None:
        await self._thread.open()

    async def close(self) -> None:
        await self._thread.close()

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on the reader thread."""
        return await self._thread.run(fn)

    async def all(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        return await self._thread.run(partial(fetch_all, sql=sql, args=args))


def fetch_all(conn: sqlite3.Connection, sql: str, args: Sequence[object]) -> list[Row]:
    return [tuple(r) for r in conn.execute(sql, args).fetchall()]


def in_snapshot(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run several reads in one read transaction: they all see the same commit."""
    conn.execute("BEGIN")
    try:
        return fn(conn)
    finally:
        conn.execute("COMMIT")
