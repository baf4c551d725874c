"""RunDriver: one segment of a chat's agent run, from (re)start to its outcome.

A segment builds the agent from the store (or from the message just stored), runs it, shows its
progress, and returns what happened — a question asked, an answer made (graded by the reviewer
when there is one), a failure, a crash — as a RunOutcome. It writes only its own steps (each
model reply before its tools run; tool results and steering messages with the next write).
Every change of the chat's state is the chat task's (bot.actor), which stores the outcome in
one transaction with its outbox row. Nothing is held after a segment ends: an answer to the
question re-drives the next segment from the store.
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
from agent_core.events import AnswerReady, QuestionAsked, RunFailed, Verdict
from agent_core.journal import PendingAsk
from agent_core.party import read_party
from agent_core.schema import AgentState, Message, Role
from bot.chat import ChatKey, RunInfo
from bot.delivery import Progress
from bot.metrics import Metrics
from bot.records import AgentFactory, RunSpec, location_from_json
from bot.review import PlanReviewer, ReviewRequest
from bot.settings import Settings
from bot.store.base import SessionRow, Store

log = logging.getLogger(__name__)


class SteerBox:
    """Messages the person sent while the run works, handed to it at its next step."""

    def __init__(self) -> None:
        self._waiting: list[tuple[int, Message]] = []

    def offer(self, inbox_id: int, message: Message) -> None:
        self._waiting.append((inbox_id, message))

    def take(self) -> list[tuple[int, Message]]:
        taken, self._waiting = self._waiting, []
        return taken

    def left(self) -> list[int]:
        """Offered but never taken (the run ended first): they go back to the chat's inbox order."""
        return [inbox_id for inbox_id, _ in self._waiting]


@dataclass(frozen=True, slots=True)
class Paused:
    messages: list[Message]  # the step's messages, not yet stored: they ride with the pause
    asks: tuple[PendingAsk, ...]  # asked at once (one per person on a team trip)
    step: int
    inbox_done: list[int]


@dataclass(frozen=True, slots=True)
class Finished:
    messages: list[Message]
    answer: AnswerReady
    verdict: Verdict | None
    steps: int
    inbox_done: list[int]


@dataclass(frozen=True, slots=True)
class Failed:
    failure: RunFailed
    messages: list[Message]
    inbox_done: list[int]


@dataclass(frozen=True, slots=True)
class Crashed:
    error: str


RunOutcome = Paused | Finished | Failed | Crashed


@dataclass
class StoreJournal:
    """agent_core.journal.RunJournal on the store, for one run segment."""

    store: Store
    session: SessionRow
    steer: SteerBox
    deferred: list[Message] = field(default_factory=list)  # tool results and steering, for the next write
    inbox_done: list[int] = field(default_factory=list)  # steering rows that close with the next write
    paused: Paused | None = None

    def incoming(self) -> Sequence[Message]:
        taken = self.steer.take()
        messages = [m for _, m in taken]
        self.deferred.extend(messages)
        self.inbox_done.extend(i for i, _ in taken)
        return messages

    async def record(self, messages: Sequence[Message], *, step: int, defer: bool = False) -> None:
        if defer:
            self.deferred.extend(messages)
            return
        pending, done = self.take()
        await self.store.append(self.session.id, pending + list(messages), step=step, inbox_done=done)

    async def pause(self, messages: Sequence[Message], asks: Sequence[PendingAsk], *, step: int) -> None:
        pending, done = self.take()
        self.paused = Paused(pending + list(messages), tuple(asks), step, done)

    def take(self) -> tuple[list[Message], list[int]]:
        out, self.deferred = self.deferred, []
        done, self.inbox_done = self.inbox_done, []
        return out, done


class RunDriver:
    def __init__(
        self, *, store: Store, agents: AgentFactory, settings: Settings, metrics: Metrics,
        reviewer: PlanReviewer | None, progress: Progress, clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.agents = agents
        self.settings = settings
        self.metrics = metrics
        self.reviewer = reviewer
        self.progress = progress
        self.clock = clock
        self._tz = ZoneInfo(settings.timezone)

    async def run(
        self, chat: ChatKey, session: SessionRow, steer: SteerBox, history: list[Message] | None = None
    ) -> RunOutcome:
        """Run until the agent asks, answers or fails. `history` saves the read when the caller
        has just stored it (a new chat's first message). Cancellation propagates."""
        started = time.perf_counter()
        agent: ToolCallAgent | None = None
        try:
            agent = await self._build(session, history)
            journal = StoreJournal(self.store, session, steer)
            return await self._drive(chat, session, agent, journal)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the process keeps serving other chats
            log.exception("run for %s crashed", chat)
            return Crashed(f"{type(exc).__name__}: {exc}")
        finally:
            self.metrics.run_seconds.observe(time.perf_counter() - started)
            if agent is not None:
                await self._save_usage(session.id, agent)

    async def _drive(self, chat: ChatKey, session: SessionRow, agent: ToolCallAgent, journal: StoreJournal) -> RunOutcome:
        run = RunInfo(session.id, session.lang, session.asker_id, session.asker_name, agent.max_steps)
        rounds = 0
        while True:
            answer: AnswerReady | None = None
            failure: RunFailed | None = None
            async for event in agent.run(journal):
                if isinstance(event, AnswerReady):
                    answer = event
                elif isinstance(event, RunFailed):
                    failure = event
                elif not isinstance(event, QuestionAsked):
                    await self.progress.show(chat, event, run)
            if agent.state is AgentState.WAITING and journal.paused is not None:
                return journal.paused
            if failure is not None or answer is None:
                pending, done = journal.take()
                return Failed(failure or RunFailed("internal", "the run ended without an answer"), pending, done)
            verdict, feedback = await self._review(session, agent, answer, rounds)
            if feedback is not None:
                rounds += 1
                note = Message.user(f"[review] {feedback}")
                agent.memory.add(note)
                await journal.record([note], step=agent.current_step)
                continue
            pending, done = journal.take()
            tail = agent.memory.messages[-1] if agent.memory.messages else None
            if tail is None or tail.role is not Role.ASSISTANT or tail.tool_calls:
                pending.append(Message.assistant(answer.text))
            return Finished(pending, answer, verdict, agent.current_step, done)

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
            travellers=tuple(t.label for t in read_party(session.request)),
        )
        return self.agents.build(spec)

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
