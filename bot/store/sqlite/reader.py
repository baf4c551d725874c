"""SqliteReader: the store's read-only SQLite connections, beside the writer (bot.store.sqlite.writer).

WAL lets reads run beside the writer without waiting for a commit, and they see only what is
committed. Two connections, for two kinds of read:

- point reads (one chat's view, a session, its history, a question: indexed, bounded by one
  chat) run inline on the event loop. They take tens of microseconds, less than a hand-off to a
  thread and back, which would also wake a thread that competes with the loop for the GIL.
- scans (every waiting question at start-up, the operator's lists, the gauges) run on a thread
  of their own (bot.store.sqlite.thread): their time grows with the database, and the loop must
  keep serving other chats meanwhile.

A read is a plain function of the connection, so a caller that needs several queries at once
(the chat's view: its inbox rows, session and questions) reads them in one snapshot.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from bot.store.base import StoreClosed
from bot.store.sqlite.thread import SqliteThread

T = TypeVar("T")
Row = tuple[object, ...]
READER_CACHE_KIB = 256  # reads are by index; the OS caches the file; RSS stays flat as data grows
# A point read never waits long on a lock in WAL mode; should it, the loop must not stall for
# the scan thread's five seconds.
POINT_BUSY_MS = 200
_PRAGMAS = ("query_only=ON", f"cache_size=-{READER_CACHE_KIB}")


class SqliteReader:
    def __init__(self, path: str) -> None:
        self.path = path
        self._thread = SqliteThread(path, "sqlite-reader", ("busy_timeout=5000", *_PRAGMAS))
        self._point: sqlite3.Connection | None = None

    async def open(self) -> None:
        await self._thread.open()
        conn = sqlite3.connect(self.path, isolation_level=None)
        for pragma in (f"busy_timeout={POINT_BUSY_MS}", *_PRAGMAS):
            conn.execute(f"PRAGMA {pragma}")
        self._point = conn

    async def close(self) -> None:
        if self._point is not None:
            conn, self._point = self._point, None
            conn.close()
        await self._thread.close()

    def point(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` now, on the loop: for reads bounded by one chat."""
        if self._point is None:
            raise StoreClosed("the store is not open")
        return fn(self._point)

    def point_all(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        return self.point(partial(fetch_all, sql=sql, args=args))

    async def scan(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        """A read whose time grows with the database, on the reader thread."""
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
