"""Wake-ups across processes: LISTEN on a dedicated connection that comes back by itself.

    async def wake(channel: str, payload: str) -> None: ...   # e.g. kick the chat `payload`
    async def rescan() -> None: ...                            # e.g. look at every chat with work

    listener = Listener(url, [INBOX_CHANNEL], wake, on_connect=rescan)
    await listener.start()      # StoreUnavailable if the database cannot be reached now
    ...
    await listener.stop()

The sender is any transaction: `await notify(conn, channel, payload)` (PostgresStore.add_inbox
sends the chat key on bot.store.postgres.writes.INBOX_CHANNEL). PostgreSQL delivers a NOTIFY at the
sender's COMMIT (never for a rolled-back transaction), folds identical ones of one transaction
into one, limits the payload to 8000 bytes, and stores nothing: a connection that is not
listening at that moment misses it. So a notification is a hint, the tables are the truth:

- `on_connect` runs after every (re)connect, once LISTEN is in place; that is where the caller
  scans the tables for what it may have missed while disconnected. It runs at start too.
- the caller keeps a periodic sweep as the safety net (a lost TCP connection can take a while
  to be noticed; `check_s` bounds that by a `SELECT 1` on the idle connection).

The connection is its own, never a pooled one: asyncpg's pool runs `UNLISTEN *` when a
connection goes back to it. After the connection is lost the listener retries every `retry_s`
(doubling up to `retry_max_s`) and runs LISTEN again for every channel. Callbacks run as tasks
of their own; an exception in one is logged and does not stop the listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable

import asyncpg

from bot.background import stop_task
from bot.store.postgres.connect import APPLICATION_NAME, LOST_ERRORS, connect
from bot.store.postgres.writes import INBOX_CHANNEL

log = logging.getLogger(__name__)

OnNotify = Callable[[str, str], Awaitable[None]]
OnConnect = Callable[[], Awaitable[None]]

__all__ = ["INBOX_CHANNEL", "Listener", "notify"]


async def notify(conn: asyncpg.Connection, channel: str, payload: str) -> None:
    """Send `payload` on `channel`: at COMMIT inside a transaction, at once outside one."""
    await conn.execute("SELECT pg_notify($1, $2)", channel, payload)


class Listener:
    """LISTEN on `channels` over one dedicated connection, reconnecting and re-LISTENing."""

    def __init__(
        self, url: str, channels: Iterable[str], on_notify: OnNotify, *, on_connect: OnConnect | None = None,
        retry_s: float = 0.5, retry_max_s: float = 5.0, check_s: float = 5.0,
        application_name: str = APPLICATION_NAME,
    ) -> None:
        self.url = url
        self.application_name = application_name
        self.channels = tuple(channels)
        self._on_notify = on_notify
        self._on_connect = on_connect
        self._retry_s, self._retry_max_s, self._check_s = retry_s, retry_max_s, check_s
        self._conn: asyncpg.Connection | None = None
        self._lost = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._callbacks: set[asyncio.Task[None]] = set()
        self.connected = asyncio.Event()  # set while LISTEN is in place
        self.connects = 0  # successful (re)connects, the first one included

    @property
    def backend_pid(self) -> int | None:
        """The server process of the listening connection (for pg_terminate_backend in tests)."""
        return self._conn.get_server_pid() if self._conn is not None else None

    async def start(self) -> None:
        """Connect and LISTEN now (StoreUnavailable if that fails), then keep it up in the background."""
        await self._connect()
        self._task = asyncio.create_task(self._run(), name="pg-listener")

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None
        await self._close()
        for task in list(self._callbacks):
            task.cancel()
        await asyncio.gather(*self._callbacks, return_exceptions=True)

    async def _connect(self) -> None:
        conn = await connect(self.url, application_name=self.application_name)
        try:
            self._lost.clear()
            conn.add_termination_listener(self._terminated)
            for channel in self.channels:
                await conn.add_listener(channel, self._deliver)
        except BaseException:
            conn.terminate()
            raise
        self._conn = conn
        self.connects += 1
        self.connected.set()
        if self._on_connect is not None:
            self._spawn(self._on_connect())

    async def _close(self) -> None:
        self.connected.clear()
        conn, self._conn = self._conn, None
        if conn is not None and not conn.is_closed():
            try:
                await asyncio.wait_for(conn.close(), timeout=2)
            except Exception:
                conn.terminate()

    async def _run(self) -> None:
        while True:
            await self._watch()
            log.warning("lost the LISTEN connection; reconnecting")
            await self._close()
            delay = self._retry_s
            while True:
                await asyncio.sleep(delay)
                try:
                    await self._connect()
                    break
                except Exception as exc:
                    log.warning("LISTEN reconnect failed (%s); retrying in %.1f s", exc, delay)
                    delay = min(delay * 2, self._retry_max_s)
            log.info("LISTEN connection back (%s)", ", ".join(self.channels))

    async def _watch(self) -> None:
        """Return once the connection is gone: its termination, or a failed check while idle."""
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._lost.wait(), timeout=self._check_s)
                return
            conn = self._conn
            if conn is None or conn.is_closed():
                return
            try:
                await asyncio.wait_for(conn.execute("SELECT 1"), timeout=self._check_s)
            except (*LOST_ERRORS, TimeoutError, asyncpg.InterfaceError):
                return

    def _terminated(self, conn: object) -> None:
        if conn is self._conn:  # not the one closed on the way to its successor
            self._lost.set()

    def _deliver(self, _conn: object, _pid: int, channel: str, payload: str) -> None:
        self._spawn(self._on_notify(channel, payload))

    def _spawn(self, coro: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coro)
        self._callbacks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._callbacks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("LISTEN callback failed", exc_info=task.exception())
