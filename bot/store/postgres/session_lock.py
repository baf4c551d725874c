"""PgSessionLock: one process of several does a job (the Telegram poller), by an advisory lock.

    lock = PgSessionLock(url, key)
    await lock.acquire()        # waits while another process holds it (tries every retry_s)
    await lock.wait_lost()      # returns if our connection is lost: stop the job at once
    await lock.release()

The lock is PostgreSQL's session-level `pg_try_advisory_lock(key)` on a dedicated connection:
the server holds it as long as that connection lives and frees it the moment the connection
ends, so a poller killed with SIGKILL (its socket closed by the kernel) frees it at once, and the
standby's next try, within `retry_s`, takes it. While it waits the standby only asks the
database; it never calls the platform. A holder that cannot reach the database for `check_s`
treats the lock as lost, since the server may have ended its session and granted the lock to
another process (a frozen holder can poll late once; the inbox de-duplicates the updates).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import asyncpg

from bot.store.base import StoreUnavailable
from bot.store.postgres.connect import LOST_ERRORS, connect

log = logging.getLogger(__name__)


class PgSessionLock:
    def __init__(self, url: str, key: int, *, retry_s: float = 1.0, check_s: float | None = None) -> None:
        self.url = url
        self.key = key
        self.retry_s = retry_s
        self.check_s = check_s if check_s is not None else retry_s
        self._conn: asyncpg.Connection | None = None
        self._lost = asyncio.Event()

    async def acquire(self) -> None:
        while True:
            try:
                if self._conn is None or self._conn.is_closed():
                    self._conn = await connect(self.url)
                if await asyncio.wait_for(self._conn.fetchval("SELECT pg_try_advisory_lock($1)", self.key),
                                          self.check_s):
                    self._lost.clear()
                    self._conn.add_termination_listener(lambda _conn: self._lost.set())
                    return
            except (StoreUnavailable, TimeoutError, asyncpg.InterfaceError, *LOST_ERRORS) as exc:
                log.warning("cannot ask for the advisory lock %s: %s", self.key, exc)
                await self._close()
            await asyncio.sleep(self.retry_s)

    async def wait_lost(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), self.check_s)
                return
            conn = self._conn
            if conn is None or conn.is_closed():
                return
            try:
                await asyncio.wait_for(conn.execute("SELECT 1"), self.check_s)
            except (TimeoutError, asyncpg.InterfaceError, *LOST_ERRORS):
                log.warning("lost the connection that holds the advisory lock %s", self.key)
                await self._close()
                return

    async def release(self) -> None:
        await self._close()  # ending the session frees the lock

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            try:
                await asyncio.wait_for(conn.close(), 2)
            except Exception:
                conn.terminate()
