"""SessionManager: the runtime's front door, the chats' actors, and the recovery at start.

A message is stored in the chat's inbox before anything else happens, then the chat's actor
(bot.chat.actor.ChatActor, one task per chat with work) is woken and does the rest. The deadline
watcher, the start-up recovery and the delivery worker never change a chat either: they write
events to its inbox and wake it. Chats run concurrently; one chat's triggers are applied one at
a time, in order, by its own task.

Which process runs a chat is bot.cluster.ownership's answer: with SQLite this one, at once; with
PostgreSQL the one holding the chat's lease (bot.cluster.leases). A chat's actor, its run and its
delivery lane run only under a claim on the chat, and their writes carry its fence; a lease taken
over stops all three here (`_lost`). A chat claimed fresh whose run was working (its owner died,
or was stopped past its lease) gets a `resume` event, so the new owner re-drives the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import time
import uuid
from collections.abc import Callable

from opentelemetry.trace import Tracer

from agent_core.party import read_party
from bot import texts
from bot.chat.actor import ChatActor
from bot.chat.actor_deps import ActorDeps, state_with_run
from bot.chat.addressing import bound_question, is_for
from bot.chat.deadlines import DeadlineWatcher
from bot.chat.staged_rows import Staged
from bot.cluster.ownership import Claim, LocalOwnership, Ownership
from bot.delivery.bodies import Progress
from bot.delivery.outbox import DeliveryWorker
from bot.delivery.retry_policy import DeliveryPolicy
from bot.observe.log_context import ChatLogContext
from bot.observe.metrics import Metrics
from bot.observe.model_prices import PriceTable
from bot.observe.trip_trace import TripTracer
from bot.ratelimit import Limits
from bot.run.driver import RunDriver
from bot.run.records import (
    AgentFactory,
    HistoryEntry,
    PendingQuestion,
    SessionInfo,
    history_from_messages,
    message_from_json,
    message_to_json,
)
from bot.run.review import PlanReviewer
from bot.settings import Settings
from bot.store.base import ChatEvent, InboxRow, SignoffRow, StagedInbox, Store
from bot.surface import ChatKey, IncomingMessage, MessageKind, Notice, SubmitOutcome, Surface

log = logging.getLogger(__name__)


class SessionManager:
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
        self._actors: dict[str, ChatActor] = {}
        self.ownership: Ownership = ownership or LocalOwnership()
        self._claiming: dict[str, asyncio.Task[None]] = {}
        self._stopping: set[asyncio.Task[None]] = set()
        self._surfaces: dict[str, Surface] = {}
        self._changed = asyncio.Event()
        self._started = False
        self.progress = Progress(metrics=self.metrics, surfaces=self._surfaces, owns=self.ownership.holds)
        self.deadlines = DeadlineWatcher(store, self.wake, clock)
        self.outbox = DeliveryWorker(
            store=store, surfaces=self._surfaces, metrics=self.metrics, progress=self.progress, on_failed=self.wake,
            policy=delivery or DeliveryPolicy(
                first_delay_s=settings.delivery_backoff_s, max_delay_s=settings.delivery_max_backoff_s,
                deadline_s=settings.delivery_deadline_s,
                question_deadline_s=settings.human_timeout_s),
            max_steps=settings.max_steps, owns=self.ownership.holds, on_idle=self._lane_idle, on_posted=self.wake,
            logs=logs,
        )
        driver = RunDriver(store=store, agents=agents, settings=settings, metrics=self.metrics, reviewer=reviewer,
                           progress=self.progress, prices=prices or PriceTable(settings.llm_prices), trips=TripTracer(tracer),
                           clock=clock)
        self._deps = ActorDeps(store=store, driver=driver, settings=settings, metrics=self.metrics,
                               deliver=self.outbox.wake, question_stored=self.deadlines.wake,
                               logs=logs or ChatLogContext(), clock=clock, members=self._members)
        self.metrics.refresh_with(self._refresh_gauges)

    # -- lifecycle -------------------------------------------------------------------------
    def attach(self, surface: Surface) -> None:
        self._surfaces[surface.platform] = surface

    async def start(self) -> None:
        """Recovery: a `resume` event for every run the stop interrupted, then wake every chat with
        work. Delivery of what was queued before goes on in the background."""
        self._started = True
        if not self.ownership.immediate:  # several processes: leases, NOTIFY and the sweep decide
            await self.ownership.start(self.wake, self._lost)
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
        self._started = False  # no new actors: the runs stopped below must not start any
        await self.deadlines.stop()
        claiming = list(self._claiming.values())
        for task in claiming:
            task.cancel()
        await asyncio.gather(*claiming, return_exceptions=True)
        actors = list(self._actors.values())
        self._actors.clear()
        for actor in actors:
            await actor.stop()
        await self.outbox.stop()
        await asyncio.gather(*self._stopping, return_exceptions=True)
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
        key, body = str(msg.chat), message_to_json(msg)
        # The chat runs here (its actor does, or this process claims it now): no other process
        # is woken, unless the claim finds the chat held elsewhere (_claim then tells its holder).
        early = self._claims_early(key)
        here = early or key in self._actors
        staging = asyncio.ensure_future(self.store.stage_inbox(platform, msg.dedup_id, key, body, notify=not here))
        if early:
            self._claiming[key] = asyncio.create_task(self._claim(key, after=staging), name=f"claim:{key}")
        staged = await staging
        if staged.inbox_id is None:
            await staged.committed
            self.metrics.messages_in.labels(platform, "duplicate").inc()
            return SubmitOutcome.DUPLICATE
        # The chat's task may start on the message while its row commits; it stores and sends
        # nothing of it before the commit (bot.chat.actor). The surface hears "accepted" only after.
        row = InboxRow(staged.inbox_id, platform, msg.dedup_id, key, body, staged.received_at)
        self.wake(key, (row, staged.committed))
        await asyncio.shield(staged.committed)  # a caller that gives up must not un-store it for the chat
        self.metrics.messages_in.labels(platform, "accepted").inc()
        return SubmitOutcome.ACCEPTED

    def wake(self, key: str, staged: Staged | None = None) -> None:
        """The chat has something in its inbox: its actor applies it (started if it had ended).
        `staged`: the row just written, and its commit (Store.stage_inbox): an actor of this
        process may begin on it before it can read it."""
        if not self._started:
            return  # stopped (or not yet started: start() wakes every chat with work)
        actor = self._actors.get(key)
        if actor is None:
            if not self.ownership.immediate:
                if key not in self._claiming:  # a claim under way starts an actor that reads the inbox
                    self._claiming[key] = asyncio.create_task(self._claim(key), name=f"claim:{key}")
                return
            claim = self.ownership.claim_now(key)
            if claim is None:
                return
            actor = self._run_actor(claim)
        if staged is not None:
            actor.stage(*staged)
        actor.wake()

    def _claims_early(self, key: str) -> bool:
        """A chat this process does not run yet (PostgreSQL): ask for its lease while its message
        is being stored, instead of after (a round trip and a commit fewer before the reply
        starts). The claim starts the actor only once the row's write is over, so the actor's
        first read finds it; a duplicate or a failed write leaves an actor with nothing to do,
        which ends and gives the chat up as a quiet chat does."""
        return self._started and not self.ownership.immediate and key not in self._actors and key not in self._claiming

    def redeliver(self, key: str) -> None:
        """A row of the chat was put back in its outbox (the operator's retry): send it."""
        if self.ownership.immediate or self.ownership.holds(key):
            self.outbox.wake(key)
        else:  # the process that claims the chat opens its delivery lane
            self.wake(key)

    async def _claim(self, key: str, after: asyncio.Future[StagedInbox] | None = None) -> None:
        """`after`: the inbox write the claim was started beside (`_claims_early`); the actor
        starts once it is over, whatever its outcome (submit reports that)."""
        try:
            claim = await self.ownership.claim(key)
            if claim is None:  # held live elsewhere
                if after is not None:  # stored here without a NOTIFY: wake the holder now
                    await self._tell_holder(key, after)
                return
            if after is not None:  # the resume event (if any) comes after the row, as without it
                await asyncio.wait([after])
            if not self._started:
                self.ownership.release(key)
                return
            if claim.fresh:
                await self._resume_taken_over(claim)
            self._run_actor(claim)
        except Exception:  # the store failed: the sweep comes back to this chat
            log.exception("could not take chat %s", key)
            self.ownership.release(key)
        finally:
            self._claiming.pop(key, None)

    async def _tell_holder(self, key: str, stored: asyncio.Future[StagedInbox]) -> None:
        await asyncio.wait([stored])
        if stored.cancelled() or stored.exception() is not None or stored.result().inbox_id is None:
            return  # nothing new stored (a duplicate woke the holder when it was first stored)
        await asyncio.wait([stored.result().committed])
        await self.ownership.tell_holder(key)

    async def _resume_taken_over(self, claim: Claim) -> None:
        """A run left working by an owner that died (or stalled past its lease) is re-driven here
        (the claim read the chat's session once it was granted: bot.cluster.leases)."""
        session_id = claim.working_session
        if session_id is not None and claim.lease is not None:
            body = json.dumps({"session_id": session_id})
            await self.store.add_events([ChatEvent(claim.chat_key, "resume", body,
                                                   f"resume:{session_id}:{claim.lease.fence}")])

    def _run_actor(self, claim: Claim) -> ChatActor:
        key = claim.chat_key
        with self.ownership.scope(claim):  # the actor's tasks (its run, its lanes) carry the fence
            actor = self._actors[key] = ChatActor(ChatKey.parse(key), self._deps, self._actor_quiet,
                                                  self._actor_lost)
            if claim.fresh and claim.outbox_pending:
                self.outbox.wake(key)  # what a previous owner queued and did not send
        actor.wake()
        return actor

    def _actor_quiet(self, actor: ChatActor) -> None:
        if self._actors.get(actor.skey) is actor:
            del self._actors[actor.skey]
            if not self.outbox.busy(actor.skey):
                self.ownership.release(actor.skey)
        self._changed.set()

    def _lane_idle(self, key: str) -> None:
        if key not in self._actors and key not in self._claiming:
            self.ownership.release(key)

    def _actor_lost(self, actor: ChatActor) -> None:
        if self._actors.get(actor.skey) is actor:
            self.ownership.lost_now(actor.skey)  # calls _lost when the chat was still held
            self._lost(actor.skey)

    def _lost(self, key: str) -> None:
        """Another process owns the chat now: stop its actor, run and lane here (it rejoins when
        this process claims the chat again)."""
        actor = self._actors.pop(key, None)
        if actor is not None:
            task = asyncio.create_task(actor.stop(), name=f"stop:{key}")
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)
        self.outbox.drop(key)
        self._changed.set()

    def holds(self, chat: ChatKey) -> bool:
        """May this process send to the chat now (bot.cluster.ownership)? Surfaces ask it before
        progress they send on their own (edits, typing)."""
        return self.ownership.holds(str(chat))

    async def pending_question(self, chat: ChatKey) -> PendingQuestion | None:
        q = await self.store.question_for_chat(str(chat))
        if q is None:
            return None
        return PendingQuestion(q.tool_call_id, q.question, q.options, q.asker_id, q.posted_message_id, q.deadline)

    async def _members(self, chat: ChatKey) -> frozenset[str] | None:
        surface = self._surfaces.get(chat.platform)
        return None if surface is None else await surface.members(chat)

    async def pending_questions(self, chat: ChatKey) -> list[PendingQuestion]:
        """Every question waiting in the chat (a team trip asks several people at once), oldest first."""
        return [PendingQuestion(q.tool_call_id, q.question, q.options, q.asker_id, q.posted_message_id, q.deadline)
                for q in await self.store.questions_for_chat(str(chat))]

    async def awaits_answer_from(self, msg: IncomingMessage) -> bool:
        """Does the chat wait for this sender: a question for them (by id or @username), or the
        reason of the approver who rejected its plan?"""
        key = str(msg.chat)
        if any(q.asker_id == msg.user_id or is_for(msg, q) for q in await self.store.questions_for_chat(key)):
            return True
        signoff = await self.store.signoff_for_chat(key)
        return signoff is not None and signoff.status == "rejecting" and signoff.decided_by == msg.user_id

    async def signoff(self, chat: ChatKey) -> SignoffRow | None:
        """The chat's latest sign-off, open or decided (a surface closing its cards)."""
        return await self.store.signoff_for_chat(str(chat))

    async def record_feedback(self, chat: ChatKey, run: str, user_id: str, rating: str) -> bool:
        """A 👍 / 👎 (`rating` up or down) on the plan of `run` (bot.surface.run_ref), stored with the
        run and counted; False, nothing kept, when the chat has no such run."""
        session_id, _, run_no = run.rpartition(".")
        if rating not in ("up", "down") or not session_id or not run_no.isdigit():
            return False
        kept = await self.store.record_feedback(str(chat), session_id, int(run_no), user_id, rating, self._deps.clock())
        self.metrics.feedback.labels(chat.platform, rating if kept else "refused").inc()
        return kept

    async def known(self, chat: ChatKey) -> bool:
        """Has the chat said anything yet: a session, or a message stored and not yet handled?
        Any process answers the same once `submit` has returned (the web page may reach another
        process than the one that stored its first message)."""
        # one snapshot: the first row is finished in the transaction that starts the session
        view = await self.store.chat_view(str(chat), limit=1)
        return bool(view.rows) or view.session is not None

    async def session_info(self, chat: ChatKey) -> SessionInfo | None:
        session = await self.store.get_session(str(chat))
        if session is None:
            return None
        actor = self._actors.get(str(chat))
        state = state_with_run(session, actor is not None and actor.run_alive)
        return SessionInfo(session.id, state, session.lang, session.run_no, session.run_steps)

    async def history(self, chat: ChatKey) -> list[HistoryEntry]:
        session = await self.store.get_session(str(chat))
        if session is None:
            return []
        return history_from_messages(await self.store.load_messages(session.id))

    async def wait_until_idle(self, chat: ChatKey, timeout: float) -> None:
        """Wait until the chat is quiet: no actor working for it, no run, nothing left to deliver,
        and nothing in its inbox but messages held for its question (tests, benchmarks)."""
        async with asyncio.timeout(timeout):
            while not await self.quiet(chat):
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.02):
                        await self._changed.wait()

    async def quiet(self, chat: ChatKey) -> bool:
        key = str(chat)
        if key in self._actors or key in self._claiming or self.outbox.busy(key) or await self.store.pending_outbox(key):
            return False
        session = await self.store.get_session(key)
        if session is not None and session.state == "working":
            return False
        pending = await self.store.inbox_for(key)
        if not pending:
            return True
        questions = await self.store.questions_for_chat(key)
        # quiet with rows left only when each is a message held for the questions (not an answer)
        return bool(questions) and all(
            row.kind == "message" and bound_question(row, message_from_json(row.body), questions, session) is None
            for row in pending
        )

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
