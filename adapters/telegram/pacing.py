"""Sending within Telegram's limits: one lane per chat, one pacer for the whole bot.

A lane runs its chat's sends one at a time, in order, with at least `interval` seconds between
the end of one request and the start of the next (so arrivals at Telegram are at least that far
apart), and waits out every RetryAfter before trying the same request again. Questions, answers
and notices are jobs that must be delivered; progress is a *source* polled for its latest state,
so edits that pile up during a wait collapse into one. The pacer caps the whole bot at `limit`
requests per `window` seconds and serves urgent jobs before progress.
Figures are Telegram's seconds, each `time_scale` of ours (BOT_PLATFORM_TIME_SCALE: 1.0 for the
real service; the tests' fake runs on a faster clock and the bot on the same one).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import time
import warnings
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Protocol

from telegram.error import RetryAfter
from telegram.warnings import PTBDeprecationWarning

from adapters.telegram.errors import AdapterStopped

log = logging.getLogger(__name__)

URGENT = 0
PROGRESS = 1


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


class Outbox:
    """All lanes of one bot (intervals and window given in Telegram's seconds, kept in ours)."""

    def __init__(self, *, private_interval: float = 1.0, group_interval: float = 3.0, draft_interval: float = 0.5,
                 global_limit: int = 29, global_window: float = 1.0, observer: Observer | None = None,
                 time_scale: float = 1.0) -> None:
        if not time_scale > 0:
            raise ValueError(f"time_scale must be above 0, not {time_scale}")
        self.time_scale = time_scale
        self.private_interval = private_interval * time_scale
        self.group_interval = group_interval * time_scale
        self.draft_interval = draft_interval * time_scale
        self.pacer = GlobalPacer(global_limit, global_window * time_scale)
        self.observers: list[Observer] = [observer] if observer is not None else []
        self._lanes: dict[int, ChatLane] = {}
        # drafts are previews, not messages: their own lane per chat, so the first piece of an
        # answer never waits behind the chat's message interval (the global pacer still counts them)
        self._draft_lanes: dict[int, ChatLane] = {}

    def draft_lane(self, chat_id: int) -> ChatLane:
        lane = self._draft_lanes.get(chat_id)
        if lane is None:
            if len(self._draft_lanes) > 4096:
                self._prune(self._draft_lanes)
            lane = self._draft_lanes[chat_id] = ChatLane(chat_id, self.draft_interval, self.pacer, self._notify,
                                                         time_scale=self.time_scale)
        return lane

    def offer_draft(self, chat_id: int, source: ProgressSource) -> None:
        """A preview is worth sending only when it delays no real message: while the bot-wide
        budget is taken, the draft waits for the next piece of text (the answer itself is sent
        as messages anyway)."""
        if self.pacer.contended():
            return
        self.draft_lane(chat_id).offer(source)

    def lane(self, chat_id: int) -> ChatLane:
        lane = self._lanes.get(chat_id)
        if lane is None:
            if len(self._lanes) > 4096:
                self._prune(self._lanes)
            # negative ids are groups, supergroups and channels: 20 messages a minute there
            interval = self.group_interval if chat_id < 0 else self.private_interval
            lane = self._lanes[chat_id] = ChatLane(chat_id, interval, self.pacer, self._notify,
                                                   time_scale=self.time_scale)
        return lane

    def _notify(self, delivery: Delivery) -> None:
        for observer in self.observers:
            observer(delivery)

    @staticmethod
    def _prune(lanes: dict[int, ChatLane]) -> None:
        now = time.monotonic()
        for cid, lane in list(lanes.items()):
            if not lane.busy and lane.next_at < now:
                del lanes[cid]

    async def send(self, chat_id: int, kind: str, run: Callable[[], Awaitable[Any]]) -> Any:
        return await self.lane(chat_id).submit(kind, run)

    def offer(self, chat_id: int, source: ProgressSource) -> None:
        self.lane(chat_id).offer(source)

    async def close(self) -> None:
        lanes = [*self._lanes.values(), *self._draft_lanes.values()]
        await asyncio.gather(*(lane.close() for lane in lanes))
