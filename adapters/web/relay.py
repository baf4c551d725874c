"""Relay: the web chat's event logs shared by several processes (PostgreSQL).

One process runs a chat; the browser's event stream may be served by another (any process takes
any request behind a load balancer). Each process keeps its own in-memory logs
(adapters.web.log); the relay copies events between them through the database:

- an event this process produces is appended to its own log at once (as with one process) and
  published, in the order produced, by one background task (a lost database loses the copy for
  other processes, never the local event);
- a NOTIFY names a session with new events: a process that has that session's log appends what
  it has not seen, in the database's order, skipping its own;
- before the web API hands out a log's last event id (the session view, a new event stream), the
  log is caught up, so a page never sees an event twice, whichever process it reaches.

Event ids stay per process: a page that reconnects to another process gets a `reset` and
rebuilds from the session view, as after a restart (adapters.web.log).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from adapters.web.log import EventLogBook, SessionLog
from bot.background import stop_task

log = logging.getLogger(__name__)


class SharedEvent(Protocol):
    @property
    def id(self) -> int: ...
    @property
    def origin(self) -> str: ...
    @property
    def event(self) -> str: ...
    @property
    def data(self) -> str: ...


class SharedEvents(Protocol):
    """bot.store.postgres.web_events.PgWebEvents."""

    origin: str

    async def start(self, on_session: Callable[[str], Awaitable[None]],
                    on_connect: Callable[[], Awaitable[None]] | None = None) -> None: ...
    async def stop(self) -> None: ...
    async def publish(self, session_id: str, event: str, data: str) -> None: ...
    async def after(self, session_id: str, after_id: int) -> Sequence[SharedEvent]: ...


class Relay:
    def __init__(self, events: SharedEvents, book: EventLogBook) -> None:
        self.events = events
        self.book = book
        self._outgoing: asyncio.Queue[tuple[str, str, str]] = asyncio.Queue()
        self._publisher: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.events.start(self._notified, self._reconnected)
        self._publisher = asyncio.create_task(self._publish(), name="web-events-publish")

    async def stop(self) -> None:
        await stop_task(self._publisher)
        await self.events.stop()

    def produced(self, session_id: str, event: str, data: str) -> None:
        self._outgoing.put_nowait((session_id, event, data))

    async def catch_up(self, session_log: SessionLog) -> None:
        async with session_log.relay_lock:  # one reader per log: nothing appended twice
            try:
                rows = await self.events.after(session_log.session_id, session_log.relayed)
            except Exception as exc:  # the database is away: the local log is all there is for now
                log.warning("web events of %s not read: %s", session_log.session_id, exc)
                return
            for row in rows:
                session_log.relayed = row.id
                if row.origin != self.events.origin:
                    session_log.append(row.event, row.data)

    async def _notified(self, session_id: str) -> None:
        session_log = self.book.peek(session_id)
        if session_log is not None:  # nobody here asked for this session: nothing to keep
            await self.catch_up(session_log)

    async def _reconnected(self) -> None:
        for session_log in self.book.listened():
            await self.catch_up(session_log)

    async def _publish(self) -> None:
        while True:
            session_id, event, data = await self._outgoing.get()
            try:
                await self.events.publish(session_id, event, data)
            except Exception as exc:
                log.warning("web event of %s not shared with other processes: %s", session_id, exc)
