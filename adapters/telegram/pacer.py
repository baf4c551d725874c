"""The bot-wide pacer: at most `limit` requests reach Telegram in any `window` seconds.

Every lane (lane.py) takes a slot from the one pacer of its bot before each request. When slots
are short, urgent jobs (questions, answers, notices) are served before progress, and in the
order they asked; budget.py shrinks `limit` to this process's share when several processes send
for one bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

URGENT = 0
PROGRESS = 1


class GlobalPacer:
    """At most `limit` requests reach Telegram in any `window` seconds.

    A slot is held from the start of a request until `window` seconds after it *finished*:
    a request arrives somewhere between its start and its finish, so counting finished ones
    this way bounds arrivals however much the network or a busy event loop delays them.
    """

    def __init__(self, limit: int = 29, window: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._in_flight = 0
        self._finished: deque[float] = deque()
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None

    @contextlib.asynccontextmanager
    async def slot(self, priority: int) -> AsyncIterator[None]:
        await self._acquire(priority)
        try:
            yield
        finally:
            self._in_flight -= 1
            self._finished.append(self._clock())
            self._pump()

    async def _acquire(self, priority: int) -> None:
        if not self._waiters and self._free():
            self._in_flight += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (priority, next(self._seq), fut))
        self._pump()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self._in_flight -= 1  # granted just as we were cancelled: give it back
                self._pump()
            raise

    def contended(self) -> bool:
        """Are requests waiting for a slot (or would the next one wait)?"""
        return bool(self._waiters) or not self._free()

    def _free(self) -> bool:
        now = self._clock()
        while self._finished and now - self._finished[0] >= self.window:
            self._finished.popleft()
        return self._in_flight + len(self._finished) < self.limit

    def _on_timer(self) -> None:
        self._timer = None
        self._pump()

    def _pump(self) -> None:
        while self._waiters and self._free():
            _, _, fut = heapq.heappop(self._waiters)
            if not fut.done():
                self._in_flight += 1
                fut.set_result(None)
        if self._waiters and self._timer is None and self._finished:
            delay = max(0.0, self._finished[0] + self.window - self._clock())
            self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)
