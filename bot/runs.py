"""RunDriver: drive one chat's agent run, journal it to the store, and hand events to its surface.

A run goes: (re)build the agent from the store -> agent.run() -> events. On a question the
pause is already stored (by the journal) before the question is posted; the run then awaits
the chat's answer Future for a while and, if nothing comes, parks: the coroutine ends and the
session is re-driven from the store when the answer arrives. The answer is stored with the
outbox row in one transaction, then delivered, then marked sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo

from agent_core.agents import ToolCallAgent
from agent_core.events import (
    AnswerReady,
    QuestionAsked,
    RunFailed,
    RunFinished,
    Verdict,
)
from agent_core.journal import PendingAsk
from agent_core.memory import Memory
from agent_core.schema import AgentState, Message, Role
from bot import texts
from bot.chat import ChatKey, Notice, RunInfo, Surface
from bot.delivery import Delivery, answer_body
from bot.metrics import Metrics
from bot.records import AgentFactory, RunSpec, location_from_json
from bot.review import PlanReviewer, ReviewRequest
from bot.settings import Settings
from bot.store.base import QuestionRow, SessionRow, Store

log = logging.getLogger(__name__)


@dataclass(eq=False)
class ChatRuntime:
    """What one chat holds in memory while it has work; dropped when it is quiet (parked)."""

    key: ChatKey
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    drain_task: asyncio.Task[None] | None = None
    run_task: asyncio.Task[None] | None = None
    answer: asyncio.Future[Message] | None = None
    noticed: set[int] = field(default_factory=set)
    dirty: bool = False
    current_row: int | None = None  # the inbox row being processed (to set aside if it keeps failing)

    @property
    def busy(self) -> bool:
        return self.run_task is not None and not self.run_task.done()

    @property
    def active(self) -> bool:
        drain = self.drain_task is not None and not self.drain_task.done()
        return self.busy or drain


class StoreJournal:
    """agent_core.journal.RunJournal on the store, for one session."""

    def __init__(self, store: Store, session: SessionRow, timeout_s: float, on_pause: Callable[[], None]) -> None:
        self.store = store
        self.session = session
        self.timeout_s = timeout_s
        self.on_pause = on_pause
        self.deferred: list[Message] = []  # tool results waiting for the next write

    async def record(self, messages: Sequence[Message], *, step: int, defer: bool = False) -> None:
        if defer:
            self.deferred.extend(messages)
            return
        await self.store.append(self.session.id, self.take_deferred() + list(messages), step=step)

    def take_deferred(self) -> list[Message]:
        out, self.deferred = self.deferred, []
        return out

    async def pause(self, messages: Sequence[Message], ask: PendingAsk, *, step: int) -> None:
        messages = self.take_deferred() + list(messages)
        now = time.time()
        row = QuestionRow(
            self.session.id, ask.tool_call_id, ask.question, ask.options, self.session.asker_id,
            now, now + self.timeout_s, None, "waiting",
        )
        await self.store.pause(self.session.id, messages, row, step=step)
        self.on_pause()


class RunDriver:
    def __init__(
        self,
        *,
        store: Store,
        agents: AgentFactory,
        settings: Settings,
        metrics: Metrics,
        reviewer: PlanReviewer | None,
        surfaces: dict[str, Surface],
        on_run_end: Callable[[ChatRuntime], None],
        clock: Callable[[], float] = time.time,
        on_question: Callable[[], None] = lambda: None,
    ) -> None:
        self.store = store
        self.agents = agents
        self.settings = settings
        self.metrics = metrics
        self.reviewer = reviewer
        self.delivery = Delivery(store=store, settings=settings, metrics=metrics, surfaces=surfaces)
        self.on_run_end = on_run_end
        self.on_question = on_question
        self.clock = clock
        self._tz = ZoneInfo(settings.timezone)

    # -- starting, answering, stopping (called with chat.lock held) -------------------------
    def spawn(
        self, chat: ChatRuntime, session_id: str, fresh: SessionRow | None = None, history: list[Message] | None = None
    ) -> None:
        """Start (or resume) the session's run. `fresh` (the row) and `history` (its messages)
        save the reads when the caller has just written them: a burst of new chats otherwise
        queues one read each on the store's reader thread before any model call starts."""
        chat.run_task = asyncio.create_task(self._drive(chat, session_id, fresh, history), name=f"run:{chat.key}")

    def hand_answer(self, chat: ChatRuntime, session_id: str, answer: Message) -> None:
        """Give a stored answer to the waiting coroutine, or re-drive a parked session from the store."""
        if chat.busy:
            if chat.answer is None or chat.answer.done():
                chat.answer = asyncio.get_running_loop().create_future()
            chat.answer.set_result(answer)
        else:
            self.metrics.sessions_parked.dec()
            self.spawn(chat, session_id)

    async def stop_run(self, chat: ChatRuntime, session: SessionRow, *, close: bool) -> None:
        parked = session.state == "waiting" and not chat.busy
        task = chat.run_task
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        chat.run_task = None
        chat.answer = None
        if session.state == "waiting":
            self.metrics.questions_waiting.dec()
        if parked:
            self.metrics.sessions_parked.dec()
        await self._interrupt(session.id, texts.CANCELLED_CALL, close=close)
        self.metrics.runs.labels("cancelled").inc()

    def _question_stored(self) -> None:
        self.metrics.questions_waiting.inc()  # counted once, where it is stored (not where posted)
        self.on_question()

    async def _interrupt(self, session_id: str, result: str, *, close: bool) -> None:
        """End the session's run: every call still open gets `result`, so the history stays
        valid for the API, and its question (if any) is cancelled."""
        open_calls = Memory(await self.store.load_messages(session_id)).unanswered_calls()
        fillers = [Message.tool(result, tool_call_id=tc.id, name=tc.function.name) for tc in open_calls]
        await self.store.interrupt(session_id, fillers, close=close)

    # -- the run -------------------------------------------------------------------------------
    async def _drive(
        self, chat: ChatRuntime, session_id: str, fresh: SessionRow | None, history: list[Message] | None
    ) -> None:
        started = time.perf_counter()
        agent: ToolCallAgent | None = None
        try:
            session = fresh or await self.store.session_by_id(session_id)
            if session is None:
                return
            agent = await self._build(session, history)
            run = RunInfo(session.id, session.lang, session.asker_id, session.asker_name, agent.max_steps)
            journal = StoreJournal(self.store, session, self.settings.human_timeout_s, self._question_stored)
            rounds = 0
            while True:
                answer: AnswerReady | None = None
                async for event in agent.run(journal):
                    if isinstance(event, AnswerReady):
                        answer = event
                    elif isinstance(event, QuestionAsked):
                        await self.delivery.post_question(session, event, run)
                    elif isinstance(event, RunFailed):
                        await self._fail(chat, session, event, run, journal.take_deferred())
                    else:
                        await self.delivery.progress(chat.key, event, run)
                if agent.state is AgentState.WAITING:
                    reply = await self._await_answer(chat)
                    if reply is None:
                        return  # parked: no coroutine is held; the answer re-drives from the store
                    agent.memory.add(reply)
                    continue
                if answer is None:
                    return
                verdict, feedback = await self._review(session, agent, answer, rounds)
                if feedback is not None:
                    rounds += 1
                    note = Message.user(f"[review] {feedback}")
                    agent.memory.add(note)
                    await journal.record([note], step=agent.current_step)
                    continue
                await self._finish(chat, session, agent, answer, verdict, run, journal.take_deferred())
                return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the process keeps serving other chats
            log.exception("run for %s crashed", chat.key)
            await self._crashed(chat, session_id, exc)
        finally:
            self.metrics.run_seconds.observe(time.perf_counter() - started)
            if agent is not None:
                await self._save_usage(session_id, agent)
            if chat.run_task is asyncio.current_task():
                chat.run_task = None
            self.on_run_end(chat)

    async def _save_usage(self, session_id: str, agent: ToolCallAgent) -> None:
        """Each run segment builds its agent afresh, so its usage is this segment's share."""
        usage = agent.usage
        with contextlib.suppress(Exception):  # accounting must never fail a run
            await asyncio.shield(
                self.store.add_usage(session_id, usage.prompt_tokens, usage.completion_tokens, usage.calls)
            )

    async def _build(self, session: SessionRow, history: list[Message] | None = None) -> ToolCallAgent:
        messages = history if history is not None else await self.store.load_messages(session.id)
        spec = RunSpec(
            session_id=session.id, lang=session.lang, messages=messages, steps_taken=session.run_steps,
            now=datetime.fromtimestamp(session.run_started_at or self.clock(), self._tz),
            location=location_from_json(session.location),
        )
        return self.agents.build(spec)

    async def _await_answer(self, chat: ChatRuntime) -> Message | None:
        loop = asyncio.get_running_loop()
        if chat.answer is None:
            chat.answer = loop.create_future()
        fut = chat.answer
        try:
            async with asyncio.timeout(self.settings.park_after_s):
                reply = await asyncio.shield(fut)
        except TimeoutError:
            async with chat.lock:
                if not fut.done():
                    chat.answer = None
                    chat.run_task = None  # under the lock: the drain now sees the session as parked
                    self.metrics.sessions_parked.inc()
                    return None
            reply = fut.result()
        chat.answer = None
        return reply

    async def _review(
        self, session: SessionRow, agent: ToolCallAgent, answer: AnswerReady, rounds: int
    ) -> tuple[Verdict | None, str | None]:
        if self.reviewer is None or not self.settings.validate_plans:
            return None, None
        request = ReviewRequest(
            session.id, session.lang, session.request, answer, list(agent.memory.messages), rounds, agent.usage
        )
        outcome = await self.reviewer.review(request)
        if outcome.replan_feedback and rounds < self.settings.validate_rounds:
            return outcome.verdict, outcome.replan_feedback
        return outcome.verdict, None

    async def _finish(
        self, chat: ChatRuntime, session: SessionRow, agent: ToolCallAgent, answer: AnswerReady,
        verdict: Verdict | None, run: RunInfo, deferred: list[Message],
    ) -> None:
        tail = agent.memory.messages[-1] if agent.memory.messages else None
        final: list[Message] = list(deferred)
        if tail is None or tail.role is not Role.ASSISTANT or tail.tool_calls:
            final.append(Message.assistant(answer.text))
        body = answer_body(answer, verdict)
        async with chat.lock:
            outbox_id = await self.store.finish_run(session.id, final, outbox_kind="answer", outbox_body=body)
        self.metrics.runs.labels("answered").inc()
        await self.delivery.deliver(chat.key, answer, verdict, run, outbox_id)
        await self.delivery.progress(chat.key, RunFinished(agent.current_step), run)

    async def _fail(
        self, chat: ChatRuntime, session: SessionRow, event: RunFailed, run: RunInfo, deferred: list[Message]
    ) -> None:
        self.metrics.runs.labels(event.reason).inc()
        async with chat.lock:
            await self.store.finish_run(session.id, deferred, outbox_kind=None, outbox_body=None)
        await self.delivery.notice(chat.key, Notice("error", texts.error_text(event.reason, session.lang)))
        await self.delivery.progress(chat.key, RunFinished(0, {"error": event.reason}), run)

    async def _crashed(self, chat: ChatRuntime, session_id: str, exc: Exception) -> None:
        with contextlib.suppress(Exception):
            session = await self.store.session_by_id(session_id)
            lang = session.lang if session else "zh"
            await self._interrupt(session_id, f"Error: internal failure ({type(exc).__name__})", close=False)
            self.metrics.runs.labels("internal").inc()
            await self.delivery.notice(chat.key, Notice("error", texts.error_text("internal", lang)))
