"""The delivery worker: the one owner of the outbox.

Everything that must reach a person (a question, a final answer, the notice that ends a run, a
command's reply) is an outbox row, written in the transaction that made it. The worker sends
the rows of one chat in order, in a lane of their own (chats do not wait for each other), with
one retry policy: transient faults (network, 5xx, 429 with its retry-after) are tried again
with capped backoff and jitter until the row's own deadline (a question: when its answer is due;
anything else: BOT_DELIVERY_DEADLINE_S after it was written), never given up for being many; a
permanent refusal (blocked, chat gone, bad request) marks the row failed at once with its reason,
as does the deadline, and a failed question tells its chat through the inbox. An outage of a
platform (no connection, 5xx) pauses all of that platform's lanes behind one breaker
(bot.delivery.breaker) instead of each lane burning attempts; when a probe gets through, every
waiting lane goes on, each in its chat's order, at the platform's pace (the surface's own). A part
of a row that reached the chat is recorded before the next is sent, so no retry, restart or
/cancel sends it twice; the chat's task never waits for a delivery, and nothing cancels one.
A notice that closes an expired sign-off's cards is handed their message ids (bot.team.cards,
from the session's delivered rows: the chat's rows go in order, so every card before it has
settled); each card's edit is one of its parts.
A question's watermark (only later messages answer it) is recorded before its first attempt and
kept across re-posts (a failed attempt clears it), so a kill between the platform taking it and
its record loses no answer.

With several processes (PostgreSQL) a lane runs only in the process holding its chat's lease:
its writes carry the lease's fence (it is started in the chat's scope, bot.sessions), and
`owns(chat_key)` is asked before every attempt, so a process whose lease ran out sends nothing.
A lane that meets LeaseLost ends without marking anything; the new owner delivers the rows.

Rows found at start are the backlog: their lanes take turns (`backlog_lanes` at a time), so
hundreds of rows for chats that blocked the bot never hold up a new chat's first reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from tenacity import AsyncRetrying, retry_if_exception

from agent_core.events import RunFinished
from bot.delivery.bodies import (
    Progress,
    answer_from_body,
    audience_of,
    notice_from_body,
    question_from_body,
)
from bot.delivery.breaker import PlatformBreaker
from bot.delivery.plan_files import file_from_body
from bot.delivery.retry_policy import (
    Backoff,
    DeadlinePassed,
    DeliveryPolicy,
    StopAtDeadline,
    is_transient,
    row_deadline,
)
from bot.observe.log_context import ChatLogContext
from bot.observe.metrics import Metrics
from bot.store.base import LeaseLost, OutboxRow, Store
from bot.surface import ChatKey, DeliveryError, RunInfo, Surface
from bot.team.cards import signoff_cards

log = logging.getLogger(__name__)


@dataclass
class _RowParts:
    """bot.surface.PartLog on one outbox row."""

    store: Store
    row: OutboxRow
    done: int = 0
    last_id: str | None = None

    def __post_init__(self) -> None:
        self.done = self.row.parts_sent
        self.last_id = self.row.message_id

    async def sent(self, message_id: str, *, more: bool) -> None:
        self.done += 1
        self.last_id = message_id
        if more:  # the last part is recorded with the row's completion, in one write
            await self.store.outbox_part_sent(self.row.id, self.done, message_id)


@dataclass
class _Lane:
    task: asyncio.Task[None]
    dirty: bool = False


@dataclass
class DeliveryWorker:
    store: Store
    surfaces: dict[str, Surface]
    metrics: Metrics
    progress: Progress
    on_failed: Callable[[str], None]  # a question could not be posted: wake its chat
    policy: DeliveryPolicy = field(default_factory=DeliveryPolicy)
    max_steps: int = 0
    owns: Callable[[str], bool] = lambda chat_key: True  # bot.cluster.ownership: may this process send to the chat?
    on_idle: Callable[[str], None] = lambda chat_key: None  # the chat's lane ended with nothing left
    on_posted: Callable[[str], None] = lambda chat_key: None  # a question's posting is recorded: wake its chat
    logs: ChatLogContext | None = None  # a lane's log lines name its chat (BOT_LOG_FORMAT=json)
    breaker: PlatformBreaker | None = None
    _lanes: dict[str, _Lane] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _stopped: bool = False

    def __post_init__(self) -> None:
        self._backlog = asyncio.Semaphore(self.policy.backlog_lanes)
        if self.breaker is None:
            self.breaker = PlatformBreaker(self.policy.breaker_trip_after, max_pause_s=self.policy.max_delay_s)
        # one long-lived retry object per policy: a call leaves no retry machinery behind
        self._retrying = AsyncRetrying(
            stop=StopAtDeadline(self.policy), wait=Backoff(self.policy),
            retry=retry_if_exception(is_transient), reraise=True,
        )

    # -- lifecycle -------------------------------------------------------------------------
    async def start(self) -> None:
        """Lanes for the rows left from before the start (in the background, taking turns)."""
        for key in await self.store.chats_with_outbox():
            self._open(key, backlog=True)

    async def stop(self) -> None:
        self._stopped = True
        lanes = [lane.task for lane in self._lanes.values()]
        for task in lanes:
            task.cancel()
        for task in lanes:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._lanes.clear()

    def wake(self, chat_key: str, rows: Sequence[OutboxRow] = ()) -> None:
        """Rows were queued for the chat. `rows` (just written, as stored) save the read when no
        lane is open: then nothing older is pending for the chat, so they are next in order."""
        lane = self._lanes.get(chat_key)
        if lane is not None:
            lane.dirty = True
        else:
            self._open(chat_key, backlog=False, first=rows)

    def drop(self, chat_key: str) -> None:
        """Another process owns the chat now: stop its lane here, marking nothing."""
        lane = self._lanes.pop(chat_key, None)
        if lane is not None:
            lane.task.cancel()

    def busy(self, chat_key: str) -> bool:
        return chat_key in self._lanes

    async def wait_changed(self) -> None:
        self._changed.clear()
        await self._changed.wait()

    # -- lanes -----------------------------------------------------------------------------
    def _open(self, key: str, *, backlog: bool, first: Sequence[OutboxRow] = ()) -> None:
        if self._stopped:
            return
        self._lanes[key] = _Lane(asyncio.create_task(self._lane(key, backlog, first), name=f"deliver:{key}"))

    async def _lane(self, key: str, backlog: bool, first: Sequence[OutboxRow]) -> None:
        if self.logs is not None:
            self.logs.bind(key)
        me = asyncio.current_task()
        lost = False
        try:
            if backlog:
                async with self._backlog:
                    await self._drain(key)
            else:
                for row in first:
                    await self._deliver(row)
                # what was queued for the chat meanwhile marked the lane dirty; else nothing is
                if not first or self._lanes[key].dirty:
                    await self._drain(key)
        except asyncio.CancelledError:
            raise
        except LeaseLost as exc:
            log.warning("delivery lane for %s stops: %s", key, exc)
            lost = True
        except Exception:  # the store failed: try the chat again shortly, never give up on a row silently
            log.exception("delivery lane for %s failed; retrying", key)
            await asyncio.sleep(1)
            if (lane := self._lanes.get(key)) is not None:
                lane.dirty = True
        finally:
            lane = self._lanes.get(key)
            if lane is not None and lane.task is me:  # not dropped and replaced meanwhile
                del self._lanes[key]
                if lane.dirty and not self._stopped and not lost:
                    self._open(key, backlog=False)
                else:
                    self.on_idle(key)
            self._changed.set()

    async def _drain(self, key: str) -> None:
        while True:
            lane = self._lanes[key]
            lane.dirty = False
            rows = await self.store.pending_outbox(key)
            for row in rows:
                await self._deliver(row)
            if not rows and not lane.dirty:
                return

    # -- one row ---------------------------------------------------------------------------
    async def _deliver(self, row: OutboxRow) -> None:
        chat = ChatKey.parse(row.chat_key)
        surface = self.surfaces.get(chat.platform)
        parts = _RowParts(self.store, row)
        try:
            # read once per delivery: every attempt and the run's end use what the body says
            audience, steps, ends_run, end_reason = audience_of(row.body)
            run = RunInfo(row.session_id, audience.lang, audience.user_id, audience.user_name, self.max_steps,
                          audience.run)
            if surface is None:
                raise DeliveryError(f"no {chat.platform} surface is configured", permanent=True)
            await self._retrying(self._attempt, surface, chat, row, run, parts)
        except LeaseLost:
            raise
        except Exception as exc:
            reason = exc.reason if isinstance(exc, DeliveryError) else f"{type(exc).__name__}: {exc}"
            log.warning("gave up delivering %s #%s to %s: %s", row.kind, row.id, chat, reason)
            await self.store.outbox_failed(row.id, reason)
            self.metrics.deliveries.labels(row.kind, "failed").inc()
            if row.kind == "question":
                self.on_failed(row.chat_key)
            return
        await self.store.outbox_sent(row.id, parts.done, parts.last_id)  # a question: its recorded watermark
        if row.kind == "question":  # a message that came meanwhile waits for this (bot.chat.actor)
            self.on_posted(row.chat_key)
        self.metrics.deliveries.labels(row.kind, "sent").inc()
        if ends_run:
            await self.progress.show(chat, RunFinished(steps, {"error": end_reason} if end_reason else {}), run)

    async def _attempt(self, surface: Surface, chat: ChatKey, row: OutboxRow, run: RunInfo, parts: _RowParts) -> None:
        if not self.owns(row.chat_key):  # checked before every attempt: a retry can come late
            raise LeaseLost(row.chat_key, 0, None, None)
        assert self.breaker is not None
        # the deadline in the breaker's clock: the wall time left, from now
        left = row_deadline(self.policy, row) - time.time()
        if not await self.breaker.admit(chat.platform, self.breaker.clock() + left):
            raise DeadlinePassed(row.kind, left if left > 0 else 0.0)
        if not self.owns(row.chat_key):  # the wait can be long: ask again
            self.breaker.abandoned(chat.platform)
            raise LeaseLost(row.chat_key, 0, None, None)
        try:
            await self._send(surface, chat, row, run, parts)
        except LeaseLost:
            self.breaker.abandoned(chat.platform)
            raise
        except DeliveryError as exc:
            if exc.outage:
                self.breaker.unreachable(chat.platform)
            else:  # refused or flood-waited: the platform answers
                self.breaker.answered(chat.platform)
            await self._attempt_failed(row, exc.reason)
            raise
        except BaseException as exc:
            self.breaker.abandoned(chat.platform)
            if isinstance(exc, Exception):
                await self._attempt_failed(row, f"{type(exc).__name__}: {exc}")
            raise
        self.breaker.answered(chat.platform)

    async def _attempt_failed(self, row: OutboxRow, reason: str) -> None:
        await self.store.outbox_attempt_failed(row.id, reason)  # a question's watermark cleared with it
        self.metrics.delivery_retries.labels(row.kind).inc()

    async def _send(self, surface: Surface, chat: ChatKey, row: OutboxRow, run: RunInfo, parts: _RowParts) -> None:
        if row.kind == "question":
            # recorded before the first attempt and kept (a re-post after a restart or a takeover
            # gets it back): an attempt the platform took, killed before outbox_sent, must not
            # leave the answer given meanwhile below a later watermark. An attempt that failed
            # reached nobody: the store cleared it, and the next attempt records its own.
            await self.store.record_watermark(row.id)
            await surface.post_question(chat, question_from_body(row.body), run, parts)
        elif row.kind == "answer":
            answer, verdict = answer_from_body(row.body)
            await surface.post_answer(chat, answer, verdict, run, parts)
        elif row.kind == "file":
            await surface.post_file(chat, file_from_body(row.body), parts)
        else:
            notice = notice_from_body(row.body)
            if notice.closes:  # an expired sign-off: the cards the chat was shown close before it is said
                notice = replace(notice, cards=await signoff_cards(self.store, row.session_id, notice.closes))
            await surface.post_notice(chat, notice, parts)
