"""SqliteReader: the store's read-only SQLite connection, on its own thread.

WAL lets it read beside the writer (bot.store.writer) without waiting for a commit, and it sees
only what is committed. A read is a plain function of the connection, so a caller that needs
several queries at once (the chat's view: its inbox rows, session and questions) pays one hand-off
between the event loop and the thread, and reads them in one snapshot.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from bot.store.base import StoreClosed

T = TypeVar("T")
Row = tuple[object, ...]
READER_CACHE_KIB = 256  # reads are by index; the OS caches the file; RSS stays flat as data grows


class SqliteReader:
    def __init__(self, path: str) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None

    async def open(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-reader")
        self._conn = await self._on_thread(self._connect)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("PRAGMA query_only=ON")
        conn.execute(f"PRAGMA cache_size=-{READER_CACHE_KIB}")
        return conn

    async def close(self) -> None:
        if self._conn is not None:
            conn, self._conn = self._conn, None
            await self._on_thread(conn.close)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    async def _on_thread(self, fn: Callable[[], T]) -> T:
        if self._executor is None:
            raise StoreClosed("the store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on the reader thread."""
        conn = self._conn
        if conn is None:
            raise StoreClosed("the store is not open")
        return await self._on_thread(partial(fn, conn))

    async def all(self, sql: str, args: Sequence[object] = ()) -> list[Row]:
        return await self.read(partial(fetch_all, sql=sql, args=args))


def fetch_all(conn: sqlite3.Connection, sql: str, args: Sequence[object]) -> list[Row]:
    return [tuple(r) for r in conn.execute(sql, args).fetchall()]


def in_snapshot(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run several reads in one read transaction: they all see the same commit."""
    conn.execute("BEGIN")
    try:
        return fn(conn)
    finally:
        conn.execute("COMMIT")
