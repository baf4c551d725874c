"""One chat's lane: its sends one at a time, in order, at Telegram's pace for that chat.

A lane runs its chat's sends with at least `interval` seconds between the end of one request and
the start of the next (so arrivals at Telegram are at least that far apart), and waits out every
RetryAfter (a flood wait) before trying the same request again. Questions, answers and notices
are jobs that must be delivered; progress is a *source* polled for its latest state, so edits
that pile up during a wait collapse into one. Each request first takes a slot of the bot-wide
pacer (pacer.py). `retry_seconds` reads how long a flood wait lasts, for the posts' and the
typing indicator's own handling of one too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import warnings
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from telegram.error import RetryAfter
from telegram.warnings import PTBDeprecationWarning

from adapters.telegram.errors import AdapterStopped
from adapters.telegram.pacer import PROGRESS, URGENT, GlobalPacer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Delivery:
    """One finished send, for metrics and benchmarks (monotonic seconds)."""

    chat_id: int
    kind: str  # question | answer | notice | progress
    enqueued: float
    started: float
    finished: float
    ok: bool

    @property
    def queued_s(self) -> float:
        return self.started - self.enqueued


Observer = Callable[[Delivery], None]


class ProgressSource(Protocol):
    def has_work(self) -> bool: ...

    async def flush(self) -> bool:
        """Make at most one request; True when one was made."""
        ...


def retry_seconds(exc: RetryAfter, time_scale: float = 1.0) -> float:
    """The wait Telegram asked for, on our clock."""
    with warnings.catch_warnings():
        # PTB 22 warns that retry_after will become a timedelta; both forms are handled here
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return (value.total_seconds() if isinstance(value, timedelta) else float(value)) * time_scale


@dataclass(slots=True)
class _Job:
    kind: str
    run: Callable[[], Awaitable[Any]]
    future: asyncio.Future[Any]
    enqueued: float


class ChatLane:
    def __init__(self, chat_id: int, interval: float, pacer: GlobalPacer, observer: Observer | None,
                 clock: Callable[[], float] = time.monotonic, time_scale: float = 1.0) -> None:
        self.chat_id = chat_id
        self.interval = interval  # on our clock (Outbox scaled it)
        self.time_scale = time_scale  # for the waits a RetryAfter asks for
        self.next_at = 0.0
        self._pacer = pacer
        self._observer = observer
        self._clock = clock
        self._urgent: deque[_Job] = deque()
        self._sources: list[ProgressSource] = []
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self._stopping = asyncio.Event()

    @property
    def busy(self) -> bool:
        return self._worker is not None and not self._worker.done()

    def submit(self, kind: str, run: Callable[[], Awaitable[Any]]) -> asyncio.Future[Any]:
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if self._closed:
            fut.set_exception(AdapterStopped())
            return fut
        self._urgent.append(_Job(kind, run, fut, self._clock()))
        self._wake()
        return fut

    def offer(self, source: ProgressSource) -> None:
        if source not in self._sources:
            self._sources.append(source)
        self._wake()

    def _wake(self) -> None:
        if not self._closed and not self.busy:
            self._worker = asyncio.get_running_loop().create_task(self._work(), name=f"tg-lane:{self.chat_id}")

    def _next_source(self) -> ProgressSource | None:
        self._sources = [s for s in self._sources if s.has_work()]
        return self._sources[0] if self._sources else None

    async def _work(self) -> None:
        while not self._closed and (self._urgent or self._next_source() is not None):
            wait = self.next_at - self._clock()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), wait)
                continue
            async with self._pacer.slot(URGENT if self._urgent else PROGRESS):
                if self._urgent:
                    await self._run_job(self._urgent[0])
                else:
                    source = self._next_source()
                    if source is not None:
                        await self._run_source(source)

    async def _run_job(self, job: _Job) -> None:
        started = self._clock()
        try:
            result = await job.run()
        except RetryAfter as exc:
            self.next_at = self._clock() + retry_seconds(exc, self.time_scale)
            log.info("telegram flood wait %.1fs in chat %s", retry_seconds(exc, self.time_scale), self.chat_id)
            return  # the job stays at the head and is tried again after the wait
        except Exception as exc:  # network faults too: the delivery worker's one policy retries them
            self._finish(job, started, exc=exc)
        else:
            self._finish(job, started, result=result)

    def _finish(self, job: _Job, started: float, *, result: Any = None, exc: BaseException | None = None) -> None:
        self._urgent.popleft()
        now = self._clock()
        self.next_at = now + self.interval
        if not job.future.done():
            if exc is not None:
                job.future.set_exception(exc)
            else:
                job.future.set_result(result)
        if self._observer is not None:
            self._observer(Delivery(self.chat_id, job.kind, job.enqueued, started, now, exc is None))

    async def _run_source(self, source: ProgressSource) -> None:
        # Progress lets whatever is ready run first: the change that woke the lane was made by a
        # run that is about to send its next model request (aiohttp writes a request's body from
        # a task of its own), and an edit's CPU in between held that request ~2 ms.
        await asyncio.sleep(0)
        if self._closed:  # closed meanwhile: only a request already on the wire may still finish
            return
        started = self._clock()
        try:
            sent = await source.flush()
        except RetryAfter as exc:
            self.next_at = self._clock() + retry_seconds(exc, self.time_scale)
            return
        except Exception:
            log.warning("progress update failed in chat %s", self.chat_id, exc_info=True)
            sent = True
        if sent:
            self.next_at = self._clock() + self.interval
            if self._observer is not None:
                self._observer(Delivery(self.chat_id, "progress", started, started, self._clock(), True))

    async def drained(self) -> None:
        """Wait until the lane has nothing left to send (or is closed)."""
        while self.busy and self._worker is not None:
            await asyncio.shield(self._worker)

    async def close(self, grace: float = 5.0) -> None:
        """Let a request already on the wire finish, then fail whatever is still queued."""
        self._closed = True
        self._stopping.set()
        if self._worker is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._worker), grace)
            except (TimeoutError, Exception):
                self._worker.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._worker
        while self._urgent:
            job = self._urgent.popleft()
            if not job.future.done():
                job.future.set_exception(AdapterStopped())
