"""SessionManager: the runtime's front door, and the recovery at start.

A message is stored in the chat's inbox (committed) before anything else happens, then the
chat's actor (bot.chat.actor.ChatActor, one task per chat with work) is woken and does the rest.
The deadline watcher, the start-up recovery and the delivery worker never change a chat either:
they write events to its inbox and wake it. Chats run concurrently; one chat's triggers are
applied one at a time, in order, by its own task. Which chats run in this process, under which
claim, is bot.chat.live_chats'.

Surfaces also ask it what a chat is waiting for (its questions, its state, its history):
bot.chat.queries.ChatQueries, a part of it.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
from collections.abc import Callable

from opentelemetry.trace import Tracer

from agent_core.party import read_party
from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.deadlines import DeadlineWatcher
from bot.chat.live_chats import LiveChats
from bot.chat.queries import ChatQueries
from bot.cluster.ownership import LocalOwnership, Ownership
from bot.delivery.bodies import Progress
from bot.delivery.outbox import DeliveryWorker
from bot.delivery.retry_policy import DeliveryPolicy
from bot.observe.log_context import ChatLogContext
from bot.observe.metrics import Metrics
from bot.observe.model_prices import PriceTable
from bot.observe.trip_trace import TripTracer
from bot.ratelimit import Limits
from bot.run.driver import RunDriver
from bot.run.records import AgentFactory, message_to_json
from bot.run.review import PlanReviewer
from bot.settings import Settings
from bot.store.base import ChatEvent, Store
from bot.surface import ChatKey, IncomingMessage, MessageKind, Notice, SubmitOutcome, Surface


class SessionManager(ChatQueries):
    def __init__(
        self,
        store: Store,
        agents: AgentFactory,
        settings: Settings,
        metrics: Metrics | None = None,
        reviewer: PlanReviewer | None = None,
        clock: Callable[[], float] = time.time,
        delivery: DeliveryPolicy | None = None,
        limits: Limits | None = None,
        ownership: Ownership | None = None,
        prices: PriceTable | None = None,
        tracer: Tracer | None = None,
        logs: ChatLogContext | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.metrics = metrics or Metrics()
        # one per-user limit on every surface, so nobody runs up the model bill
        self.limits = limits or Limits(settings)
        self._clock = clock
        self.ownership: Ownership = ownership or LocalOwnership()
        self._surfaces: dict[str, Surface] = {}
        self._changed = asyncio.Event()
        self.progress = Progress(metrics=self.metrics, surfaces=self._surfaces, owns=self.ownership.holds)
        self.deadlines = DeadlineWatcher(store, self.wake, clock)
        self.outbox = DeliveryWorker(
            store=store, surfaces=self._surfaces, metrics=self.metrics, progress=self.progress, on_failed=self.wake,
            policy=delivery or DeliveryPolicy(
                first_delay_s=settings.delivery_backoff_s, max_delay_s=settings.delivery_max_backoff_s,
                deadline_s=settings.delivery_deadline_s,
                question_deadline_s=settings.human_timeout_s),
            max_steps=settings.max_steps, owns=self.ownership.holds, on_idle=lambda key: self.chats.lane_idle(key),
            on_posted=self.wake, logs=logs,
        )
        driver = RunDriver(store=store, agents=agents, settings=settings, metrics=self.metrics, reviewer=reviewer,
                           progress=self.progress, prices=prices or PriceTable(settings.llm_prices), trips=TripTracer(tracer),
                           clock=clock)
        deps = ActorDeps(store=store, driver=driver, settings=settings, metrics=self.metrics,
                         deliver=self.outbox.wake, question_stored=self.deadlines.wake,
                         logs=logs or ChatLogContext(), clock=clock, members=self._members,
                         signs_off=self._signs_off)
        self.chats = LiveChats(store, self.ownership, deps, self.outbox, self._changed)
        self.metrics.refresh_with(self._refresh_gauges)

    # -- lifecycle -------------------------------------------------------------------------
    def attach(self, surface: Surface) -> None:
        self._surfaces[surface.platform] = surface

    async def start(self) -> None:
        """Recovery: a `resume` event for every run the stop interrupted, then wake every chat with
        work. Delivery of what was queued before goes on in the background."""
        self.chats.started = True
        if not self.ownership.immediate:  # several processes: leases, NOTIFY and the sweep decide
            await self.ownership.start(self.wake, self.chats.lost)
            self.deadlines.start()
            return
        boot = uuid.uuid4().hex[:12]
        events = [
            ChatEvent(s.chat_key, "resume", json.dumps({"session_id": s.id}), f"resume:{s.id}:{boot}")
            for s in await self.store.working_sessions()
        ]
        await self.store.add_events(events)
        for key in await self.store.chats_with_inbox():
            self.wake(key)
        await self.outbox.start()
        self.deadlines.start()

    async def stop(self) -> None:
        self.chats.started = False  # no new actors: the runs stopped below must not start any
        await self.deadlines.stop()
        await self.chats.stop()
        await self.outbox.stop()
        await self.chats.stopped()
        await self.ownership.stop()  # releases the leases: a successor need not wait them out

    # -- the public API for surfaces -------------------------------------------------------
    async def submit(self, msg: IncomingMessage) -> SubmitOutcome:
        platform = msg.chat.platform
        if not self.settings.user_allowed(msg.user_id):
            self.metrics.messages_in.labels(platform, "refused").inc()
            lang = texts.detect_lang(msg.text, msg.lang or "zh")
            await self.progress.notice_now(msg.chat, Notice("refused", texts.text("refused", lang, user=msg.user_id)))
            return SubmitOutcome.REFUSED
        if (wait := await self.limits.check(msg)) > 0:
            self.metrics.messages_in.labels(platform, "limited").inc()
            lang = texts.detect_lang(msg.text, msg.lang or "zh")
            notice = Notice("limited", texts.text("slow_down", lang, seconds=math.ceil(wait)))
            await self.progress.notice_now(msg.chat, notice)
            return SubmitOutcome.LIMITED
        problem = await self._invalid(msg)
        if problem is not None:
            self.metrics.messages_in.labels(platform, "invalid").inc()
            await self.progress.notice_now(msg.chat, problem)
            return SubmitOutcome.INVALID
        # a caller that gives up must not leave the message stored and its chat asleep
        if await asyncio.shield(self._store(msg)) is None:
            self.metrics.messages_in.labels(platform, "duplicate").inc()
            return SubmitOutcome.DUPLICATE
        self.metrics.messages_in.labels(platform, "accepted").inc()
        return SubmitOutcome.ACCEPTED

    async def _store(self, msg: IncomingMessage) -> int | None:
        """Store the message in its chat's inbox and, once committed, wake the chat's actor,
        which reads it from there in order with the rest; None for a duplicate."""
        key = str(msg.chat)
        # The chat runs here (its actor does, or this process claims it next): no other process
        # is woken, unless the claim finds the chat held elsewhere (its holder is then told).
        quietly = self.chats.will_run(key)
        inbox_id = await self.store.add_inbox(msg.chat.platform, msg.dedup_id, key, message_to_json(msg),
                                              notify=not quietly)
        if inbox_id is not None:
            self.chats.wake(key, stored_quietly=quietly)
        return inbox_id

    def wake(self, key: str) -> None:
        """The chat has something in its inbox: its actor applies it (started if it had ended)."""
        self.chats.wake(key)

    def redeliver(self, key: str) -> None:
        """A row of the chat was put back in its outbox (the operator's retry): send it."""
        if self.ownership.immediate or self.ownership.holds(key):
            self.outbox.wake(key)
        else:  # the process that claims the chat opens its delivery lane
            self.wake(key)

    def holds(self, chat: ChatKey) -> bool:
        """May this process send to the chat now (bot.cluster.ownership)? Surfaces ask it before
        progress they send on their own (edits, typing)."""
        return self.ownership.holds(str(chat))

    async def _members(self, chat: ChatKey) -> frozenset[str] | None:
        surface = self._surfaces.get(chat.platform)
        return None if surface is None else await surface.members(chat)

    def _signs_off(self, chat: ChatKey) -> bool:
        """Can the chat's surface carry a sign-off (bot.surface.Surface.signs_off)?"""
        surface = self._surfaces.get(chat.platform)
        return surface is not None and surface.signs_off

    async def record_feedback(self, chat: ChatKey, run: str, user_id: str, rating: str) -> bool:
        """A 👍 / 👎 (`rating` up or down) on the plan of `run` (bot.surface.run_ref), stored with the
        run and counted; False, nothing kept, when the chat has no such run."""
        session_id, _, run_no = run.rpartition(".")
        if rating not in ("up", "down") or not session_id or not run_no.isdigit():
            return False
        kept = await self.store.record_feedback(str(chat), session_id, int(run_no), user_id, rating, self._clock())
        self.metrics.feedback.labels(chat.platform, rating if kept else "refused").inc()
        return kept

    async def _refresh_gauges(self, metrics: Metrics) -> None:
        counts = await self.store.counts()
        metrics.questions_waiting.set(counts.questions_waiting)
        metrics.sessions_parked.set(counts.sessions_asking)  # a paused run holds nothing in memory
        metrics.outbox_pending.set(counts.outbox_pending)
        metrics.outbox_failed.set(counts.outbox_failed)
        outages = self.platform_outages()
        for platform in {*outages, *self._surfaces}:
            waiting, _since = outages.get(platform, (0, None))
            metrics.platform_unreachable.labels(platform).set(1 if platform in outages else 0)
            metrics.delivery_waiting_chats.labels(platform).set(waiting)

    def platform_outages(self) -> dict[str, tuple[int, float | None]]:
        """Platforms whose deliveries wait for them to come back: chats waiting, and since when."""
        assert self.outbox.breaker is not None
        return self.outbox.breaker.waiting()

    async def _invalid(self, msg: IncomingMessage) -> Notice | None:
        if msg.kind is MessageKind.LOCATION and msg.location is not None:
            return None
        stripped = msg.text.strip()
        party = len(read_party(msg.text[: self.settings.max_message_chars]))
        if stripped and len(msg.text) <= self.settings.max_message_chars and party <= self.settings.max_travellers:
            return None
        session = await self.store.get_session(str(msg.chat))
        lang = texts.detect_lang(msg.text[:2000], session.lang if session else (msg.lang or "zh"))
        if stripped and party > self.settings.max_travellers:  # planned one by one, a team that size never converges
            return Notice("invalid", texts.text("team_too_big", lang, n=party, max=self.settings.max_travellers))
        if not stripped:
            return Notice("invalid", texts.text("empty", lang))
        return Notice("invalid", texts.text("too_long", lang, n=len(msg.text), max=self.settings.max_message_chars))
