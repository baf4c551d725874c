"""DeadlineWatcher: one task for every question's deadline, however many questions wait.

Deadlines live in the store (they survive restarts); the watcher sleeps until the earliest
one (at most `max_sleep_s`, and less when a new question wakes it) and hands each due question
to `on_due`. No timer is held per question, so ten thousand parked sessions cost nothing here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from bot.store.base import QuestionRow, Store

log = logging.getLogger(__name__)


class DeadlineWatcher:
    def __init__(
        self,
        store: Store,
        on_due: Callable[[QuestionRow], Awaitable[None]],
        clock: Callable[[], float],
        max_sleep_s: float = 30.0,
    ) -> None:
        self.store = store
        self.on_due = on_due
        self.clock = clock
        self.max_sleep_s = max_sleep_s
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="deadline-watcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def wake(self) -> None:
        """A question was stored: its deadline may be the earliest now."""
        self._wakeup.set()

    async def _run(self) -> None:
        while True:
            try:
                await self._once()
            except asyncio.CancelledError:
                raise
            except Exception:  # the watcher must outlive a bad row or a busy database
                log.exception("deadline watcher failed; retrying")
                await asyncio.sleep(1)

    async def _once(self) -> None:
        nxt = await self.store.next_deadline()
        delay = self.max_sleep_s if nxt is None else max(0.0, min(self.max_sleep_s, nxt - self.clock()))
        if delay > 0:
            self._wakeup.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wakeup.wait()
            return
        for question in await self.store.due_questions(self.clock()):
            await self.on_due(question)
