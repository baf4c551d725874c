"""PgWebEvents: the web chat's SSE events between processes (PostgreSQL).

With several processes behind a load balancer, a browser's event stream may be served by a
process other than the one running its chat. So the web surface (adapters.web.relay) writes
each event it produces to `web_events` and NOTIFYs the session id on WEB_CHANNEL; every process
LISTENs, and one serving that session reads the rows it has not seen, in id order.

    events = PgWebEvents(store, origin)
    await events.start(on_session, on_connect) # on_session(session_id): rows may be waiting
    await events.publish(session_id, event, data)
    rows = await events.after(session_id, last_id)
    await events.stop()

Rows older than `keep_s` are pruned (at most once a minute): a page that comes back later
rebuilds from `GET /api/sessions/{id}`, as it does after a restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial

import asyncpg

from bot.background import stop_task
from bot.store.base import StoreError
from bot.store.postgres.notify import Listener, notify
from bot.store.postgres.store import PostgresStore

log = logging.getLogger(__name__)

WEB_CHANNEL = "bot_web"
PRUNE_EVERY_S = 60.0


@dataclass(frozen=True, slots=True)
class WebEvent:
    id: int
    origin: str
    event: str
    data: str


class PgWebEvents:
    def __init__(self, store: PostgresStore, origin: str, *, keep_s: float = 3600.0) -> None:
        self.store = store
        self.origin = origin
        self.keep_s = keep_s
        self._listener: Listener | None = None
        self._pruner: asyncio.Task[None] | None = None

    async def start(self, on_session: Callable[[str], Awaitable[None]],
                    on_connect: Callable[[], Awaitable[None]] | None = None) -> None:
        """`on_session(id)` for each NOTIFY; `on_connect()` after every (re)connect of the LISTEN
        connection, when NOTIFYs may have been missed."""
        async def notified(_channel: str, session_id: str) -> None:
            await on_session(session_id)

        self._listener = self.store.listener([WEB_CHANNEL], notified, on_connect=on_connect)
        await self._listener.start()
        self._pruner = asyncio.create_task(self._pruning(), name="web-events-prune")

    async def stop(self) -> None:
        await stop_task(self._pruner)
        if self._listener is not None:
            await self._listener.stop()

    async def publish(self, session_id: str, event: str, data: str) -> None:
        await self.store.write(partial(_insert, session_id=session_id, origin=self.origin, event=event, data=data))

    async def after(self, session_id: str, after_id: int, limit: int = 500) -> list[WebEvent]:
        return await self.store.write(partial(_after, session_id=session_id, after_id=after_id, limit=limit))

    async def _pruning(self) -> None:
        while True:
            await asyncio.sleep(PRUNE_EVERY_S)
            try:
                await self.store.write(partial(_prune, keep_s=self.keep_s))
            except StoreError as exc:
                log.warning("could not prune web events: %s", exc)


async def _insert(conn: asyncpg.Connection, session_id: str, origin: str, event: str, data: str) -> None:
    await conn.execute("INSERT INTO web_events (session_id, origin, event, data) VALUES ($1, $2, $3, $4)",
                       session_id, origin, event, data)
    await notify(conn, WEB_CHANNEL, session_id)


async def _after(conn: asyncpg.Connection, session_id: str, after_id: int, limit: int) -> list[WebEvent]:
    rows = await conn.fetch("SELECT id, origin, event, data FROM web_events WHERE session_id = $1 AND id > $2 "
                            "ORDER BY id LIMIT $3", session_id, after_id, limit)
    return [WebEvent(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]


async def _prune(conn: asyncpg.Connection, keep_s: float) -> None:
    await conn.execute("DELETE FROM web_events WHERE created_at < now() - make_interval(secs => $1)", float(keep_s))
