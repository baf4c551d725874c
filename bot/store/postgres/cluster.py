"""What PostgresStore adds for several processes on one database: chat leases, wake-ups, a count
of the processes.

Each method is one call of bot.store.postgres.leases or bot.store.postgres.notify on a pooled
connection, through the store's `_transaction` (unfenced: a lease is what a fence is made of).
bot.cluster.leases is their one user: it claims, renews and gives up chats, sweeps for chats
whose owner died, and tells a chat's owner when another process stored an update for it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import TypeVar

import asyncpg

from bot.store.postgres import leases as pg_leases
from bot.store.postgres import notify
from bot.store.postgres.connect import APPLICATION_NAME, LEASES_APPLICATION_NAME
from bot.store.postgres.leases import Lease, Taken
from bot.store.postgres.notify import INBOX_CHANNEL, Listener, OnConnect, OnNotify
from bot.store.reads import Row

T = TypeVar("T")


class ClusterCalls(ABC):
    url: str
    _row: Callable[..., Awaitable[Row | None]]  # a read (bot.store.reads.StoreReads)

    @abstractmethod
    async def _transaction(self, fn: Callable[[asyncpg.Connection], Awaitable[T]], fence: Lease | None,
                           *, single: bool = False) -> T:
        """`fn(conn)` on a pooled connection in one transaction (PostgresStore._transaction)."""

    async def acquire_lease(self, chat_key: str, owner: str, ttl_s: float) -> Lease | None:
        """The chat's lease if it is free, released or expired; None while someone holds it."""
        return await self._transaction(partial(pg_leases.acquire, chat_key=chat_key, owner=owner, ttl_s=ttl_s), None,
                                       single=True)

    async def take_lease(self, chat_key: str, owner: str, ttl_s: float) -> Taken | None:
        """`acquire_lease`, with what the chat's previous owner left: its open session if that was
        left working, and whether its outbox has rows to send (read in the same round trip, once
        the lease is ours)."""
        return await self._transaction(partial(pg_leases.take, chat_key=chat_key, owner=owner, ttl_s=ttl_s), None,
                                       single=True)

    async def renew_lease(self, lease: Lease, ttl_s: float) -> Lease:
        """The lease extended to the database's now() + ttl_s; LeaseLost once a newer one exists."""
        return await self._transaction(partial(pg_leases.renew, lease=lease, ttl_s=ttl_s), None)

    async def release_lease(self, lease: Lease) -> bool:
        """Give the chat up; False when the lease was no longer ours."""
        return await self._transaction(partial(pg_leases.release, lease=lease), None, single=True)

    async def renew_leases(self, leases: Sequence[Lease], ttl_s: float) -> dict[str, Lease]:
        """Every lease still held, renewed in one transaction; a chat missing from the result is lost."""
        return await self._transaction(partial(pg_leases.renew_many, leases=list(leases), ttl_s=ttl_s), None)

    async def unowned_chats_with_work(self, limit: int = 500) -> list[str]:
        return await self._transaction(partial(pg_leases.unowned_chats_with_work, limit=limit), None)

    async def current_lease(self, chat_key: str) -> Lease | None:
        return await self._transaction(partial(pg_leases.current, chat_key=chat_key), None)

    async def unowned_chats_with_inbox(self, limit: int = 100) -> list[str]:
        return await self._transaction(partial(pg_leases.unowned_chats_with_inbox, limit=limit), None)

    async def notify_chat(self, chat_key: str) -> None:
        """Wake the chat's owner, in whichever process (an update stored with `notify=False` by a
        process that then found the chat held elsewhere)."""
        await self._transaction(partial(notify.notify, channel=INBOX_CHANNEL, payload=chat_key), None,
                                single=True)

    def listener(self, channels: Sequence[str], on_notify: OnNotify, *, on_connect: OnConnect | None = None,
                 application_name: str = APPLICATION_NAME, **kwargs: float) -> Listener:
        """A Listener on this store's database (not started: `await listener.start()`)."""
        return Listener(self.url, channels, on_notify, on_connect=on_connect, application_name=application_name,
                        **kwargs)

    async def bot_processes(self) -> int:
        """How many bot processes serve this database now (at least this one): each keeps one
        connection listening for its chats (bot.cluster.leases)."""
        row = await self._row(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
            LEASES_APPLICATION_NAME)
        return max(1, int(row[0]) if row else 1)
