"""SqliteThread: one SQLite connection owned by one thread, for the store's writer and reader.

sqlite3 calls block, so each connection lives on a thread of its own and the event loop hands
it plain functions of the connection: one hand-off per call, however many statements the
function runs (bot.store.sqlite.writer commits a batch of writes in one; bot.store.sqlite.reader reads a
chat's view in one).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from bot.store.base import StoreClosed

T = TypeVar("T")


class SqliteThread:
    def __init__(self, path: str, name: str, pragmas: tuple[str, ...]) -> None:
        self.path = path
        self._name = name
        self._pragmas = pragmas
        self._executor: ThreadPoolExecutor | None = None
        self.conn: sqlite3.Connection | None = None

    async def open(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self._name)
        self.conn = await self.on_thread(self._connect)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        for pragma in self._pragmas:
            conn.execute(f"PRAGMA {pragma}")
        return conn

    async def close(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            await self.on_thread(conn.close)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    async def on_thread(self, fn: Callable[[], T]) -> T:
        if self._executor is None:
            raise StoreClosed("the store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn)

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """`fn(connection)` on the connection's thread."""
        if self.conn is None:
            raise StoreClosed("the store is not open")
        return await self.on_thread(partial(fn, self.conn))
