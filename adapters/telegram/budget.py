"""The bot-wide send budget, shared by the bot's processes.

Telegram takes about 30 messages a second from one bot, however many processes send them. Each
process paces its own sends (pacer.GlobalPacer); with several processes on one PostgreSQL,
each takes its share: the bot-wide limit divided by the processes serving now, counted again
every few seconds (a process that joins or dies changes everyone's share within that time).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from adapters.telegram.pacer import GlobalPacer
from bot.background import stop_task

log = logging.getLogger(__name__)

BOT_WIDE_LIMIT = 29  # a little under Telegram's ~30 a second
RECOUNT_S = 5.0


def share(limit: int, processes: int) -> int:
    return max(1, limit // max(1, processes))


class BudgetShare:
    def __init__(self, pacer: GlobalPacer, processes: Callable[[], Awaitable[int]], *,
                 limit: int = BOT_WIDE_LIMIT, every_s: float = RECOUNT_S) -> None:
        self.pacer = pacer
        self._processes = processes
        self._limit = limit
        self._every_s = every_s
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.recount()  # before the first send
        self._task = asyncio.create_task(self._recounting(), name="telegram-budget-share")

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None

    async def recount(self) -> None:
        try:
            n = await self._processes()
        except Exception as exc:  # the database is away: keep the share we have
            log.warning("telegram: could not count the bot's processes (%s); keeping %d a second", exc,
                        self.pacer.limit)
            return
        limit = share(self._limit, n)
        if limit != self.pacer.limit:
            log.info("telegram: %d bot process(es) share the send budget: %d a second here", n, limit)
            self.pacer.limit = limit

    async def _recounting(self) -> None:
        while True:
            await asyncio.sleep(self._every_s)
            await self.recount()
