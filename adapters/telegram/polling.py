"""Long polling that acknowledges an update only after it is stored.

Telegram forgets updates once getUpdates is called with a higher offset. python-telegram-bot's
Updater asks for the next batch while the handlers of the last one may still be running, so a
kill at that moment loses what the person wrote. Here a batch is handled (each update stored in
the inbox) before the offset moves past it; after a crash Telegram sends the batch again and
the inbox drops what it already has.

With several processes on one PostgreSQL only one may poll (Telegram answers a second getUpdates
with 409 Conflict). The Poller is then given a `turn` (bot.store.base.SessionLock): it calls
Telegram only while it holds the lock, and stops polling the moment the lock is lost. A poller
that dies mid-batch never moved the offset past it, so its successor gets the batch again and
the inbox drops what was already stored: no update is lost or handled twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from telegram import Bot, Update
from telegram.error import Conflict, InvalidToken, NetworkError, RetryAfter, TimedOut

from bot.background import stop_task
from bot.store.base import SessionLock, StoreUnavailable

log = logging.getLogger(__name__)
MAX_TRIES = 3  # an update whose handling keeps failing is skipped after this many batches
STORE_DOWN_WAIT_S = 1.0  # the database is unreachable: nothing is skipped, the batch comes again


class Poller:
    def __init__(
        self,
        bot: Bot,
        handle: Callable[[Update], Awaitable[None]],
        *,
        timeout: int = 10,
        allowed_updates: Sequence[str] = (),
        turn: SessionLock | None = None,
    ) -> None:
        self.bot = bot
        self.handle = handle
        self.timeout = timeout
        self.allowed_updates = list(allowed_updates)
        self.offset: int | None = None
        self.turn = turn
        self.polling = False  # this process is the poller now
        self._task: asyncio.Task[None] | None = None
        self._failures: dict[int, int] = {}

    async def start(self) -> None:
        if self.turn is None:
            await self.bot.delete_webhook()  # polling and a webhook exclude each other
            self._task = asyncio.create_task(self._run(), name="telegram-poller")
        else:
            self._task = asyncio.create_task(self._take_turns(self.turn), name="telegram-poller")
        self._task.add_done_callback(_said_when_ended)

    def healthy(self) -> bool:
        """False once polling has ended by itself (a refused token, another bot polling with the
        same token): the process would otherwise look alive and hear nothing (/healthz says it)."""
        return self._task is None or not self._task.done()

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None

    async def _take_turns(self, turn: SessionLock) -> None:
        """Poll while this process holds the lock; wait for it again when it is lost."""
        while True:
            await turn.acquire()
            log.info("this process polls Telegram now")
            poll = asyncio.create_task(self._poll_with_webhook_off())
            lost = asyncio.create_task(turn.wait_lost())
            try:
                await asyncio.wait({poll, lost}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                self.polling = False
                for task in (poll, lost):
                    task.cancel()
                await asyncio.gather(poll, lost, return_exceptions=True)
                await turn.release()
            if poll.done() and not poll.cancelled() and poll.exception() is not None:
                raise poll.exception()  # type: ignore[misc]
            log.warning("the Telegram poller lock was lost; waiting to take it again")

    async def _poll_with_webhook_off(self) -> None:
        await self.bot.delete_webhook()
        await self._run()

    async def _run(self) -> None:
        self.polling = True
        backoff = 1.0
        while True:
            try:
                updates = await self.bot.get_updates(
                    offset=self.offset, timeout=self.timeout, allowed_updates=self.allowed_updates,
                    read_timeout=self.timeout + 10,
                )
            except RetryAfter as exc:
                await asyncio.sleep(_seconds(exc.retry_after))
                continue
            except (InvalidToken, Conflict):
                raise  # a wrong token or a second poller: nothing to retry
            except (NetworkError, TimedOut) as exc:
                log.warning("getUpdates failed (%s); retrying in %.0f s", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 30.0)
                continue
            backoff = 1.0
            if updates and not await self._handle_batch(updates):
                await asyncio.sleep(STORE_DOWN_WAIT_S)

    async def _handle_batch(self, updates: Sequence[Update]) -> bool:
        """Store the batch and move the offset past what was stored; False while the database
        is unreachable (then nothing is acknowledged and no try is counted: the updates wait in
        Telegram until the database is back, however long that takes)."""
        # Started in update order, the handlers reach the store's write queue in that order.
        results = await asyncio.gather(*(self.handle(u) for u in updates), return_exceptions=True)
        done = updates[-1].update_id + 1
        store_down = False
        for update, result in zip(updates, results, strict=True):
            if not isinstance(result, BaseException):
                continue
            if isinstance(result, StoreUnavailable):
                store_down = True
                done = min(done, update.update_id)
                continue
            tries = self._failures.get(update.update_id, 0) + 1
            log.error("could not store Telegram update %s (try %s): %r", update.update_id, tries, result)
            if tries < MAX_TRIES:
                self._failures[update.update_id] = tries
                done = min(done, update.update_id)  # not acknowledged: it comes again
            else:
                self._failures.pop(update.update_id, None)
        if store_down:
            log.warning("the database is unreachable; Telegram keeps the updates from %s until it is back", done)
        self.offset = done
        return not store_down


def _said_when_ended(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (exc := task.exception()) is not None:
        log.error("Telegram polling stopped: %s; no updates are read until the bot restarts", exc)


def _seconds(value: object) -> float:
    total = getattr(value, "total_seconds", None)
    return float(total()) if callable(total) else float(value)  # type: ignore[arg-type]
