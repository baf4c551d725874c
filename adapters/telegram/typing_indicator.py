"""The "typing…" status while a run works: Telegram shows it for about five seconds, so it is
renewed every `interval` seconds until the run posts a question or an answer, or ends.

The first action goes out only after `delay` seconds. Telegram recommends the chat action only
when the reply will take noticeable time, and a run's first moments are its busiest (inbox,
session, first model call): a burst of chats starting at once would otherwise spend that moment
on one typing request each, ahead of their questions and answers. After the delay the run is
waiting on the model, where the request costs nothing. In a forum topic the action names the
topic (Telegram shows it there only).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from telegram.error import RetryAfter, TelegramError

from adapters.telegram.lane import retry_seconds
from adapters.telegram.places import Place
from adapters.telegram.transport import Transport

log = logging.getLogger(__name__)


class TypingIndicator:
    def __init__(self, transport: Transport, interval: float = 4.0, max_s: float = 900.0,
                 delay: float = 0.5) -> None:
        self.transport = transport
        self.interval = interval
        self.delay = delay
        self.max_s = max_s  # a run that never reports its end must not type forever
        self._tasks: dict[Place, asyncio.Task[None]] = {}

    def active(self, place: Place) -> bool:
        task = self._tasks.get(place)
        return task is not None and not task.done()

    def start(self, place: Place, ours: Callable[[], bool] = lambda: True) -> None:
        """`ours`: does this process still own the chat (bot.cluster.ownership)? Typing stops once not."""
        if not self.active(place):
            self._tasks[place] = asyncio.get_running_loop().create_task(
                self._loop(place, ours), name=f"tg-typing:{place}")

    def stop(self, place: Place) -> None:
        task = self._tasks.pop(place, None)
        if task is not None:
            task.cancel()

    async def _loop(self, place: Place, ours: Callable[[], bool]) -> None:
        until = time.monotonic() + self.max_s
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        while time.monotonic() < until and ours():  # a chat another process took over: stop
            try:
                await self.transport.typing(place.chat_id, place.thread)
            except RetryAfter as exc:
                await asyncio.sleep(retry_seconds(exc))
                continue
            except TelegramError as exc:
                log.info("typing indicator stopped in chat %s: %s", place, exc)
                return
            await asyncio.sleep(self.interval)

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        self._tasks.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
