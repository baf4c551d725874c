"""RunDriver: one segment of a chat's agent run, from (re)start to its outcome.

A segment builds the agent from the store (or from the message just stored), runs it, shows its
progress, and returns what happened — a question asked, an answer made (graded by the reviewer
when there is one), a failure, a crash — as a RunOutcome. It writes only its own steps, through
its StoreJournal (each model reply before its tools run; tool results and steering messages with
the next write). The segment's records and journal are bot.run.segment's.
Every change of the chat's state is the chat task's (bot.chat.actor), which stores the outcome in
one transaction with its outbox row. Nothing is held after a segment ends: an answer to the
question re-drives the next segment from the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from zoneinfo import ZoneInfo

from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.types import AttributeValue

from agent_core.agents import ToolCallAgent
from agent_core.events import AnswerReady, QuestionAsked, RunFailed, TextReset, Verdict
from agent_core.party import read_party
from agent_core.schema import AgentState, Message, Origin, Role
from agent_core.visible_stream import ShownText
from bot.delivery.bodies import Progress
from bot.observe.metrics import Metrics
from bot.observe.model_prices import PriceTable
from bot.observe.trip_trace import TripTracer
from bot.run.records import AgentFactory, RunSpec, location_from_json
from bot.run.review import PlanReviewer, ReviewRequest
from bot.run.segment import Crashed, Failed, Finished, RunOutcome, RunWatch, SteerBox, StoreJournal
from bot.settings import Settings
from bot.store.base import RunUsage, SessionRow, Store
from bot.surface import ChatKey, RunInfo, run_ref

log = logging.getLogger(__name__)

_OUTCOME_NAMES = {"Paused": "paused", "Finished": "answered", "Failed": "failed", "Crashed": "crashed"}


def _record_outcome(span: Span, outcome: RunOutcome) -> None:
    # one set_attributes call: each call on a span takes its lock and checks every value again
    attributes: dict[str, AttributeValue] = {"run.outcome": _OUTCOME_NAMES[type(outcome).__name__]}
    if outcome.usage is not None:
        u = outcome.usage
        attributes.update({"run.steps": u.steps, "gen_ai.usage.input_tokens": u.prompt_tokens,
                           "gen_ai.usage.output_tokens": u.completion_tokens, "run.cost_usd": u.cost_usd})
    span.set_attributes(attributes)
    if isinstance(outcome, Crashed | Failed):
        span.set_status(Status(StatusCode.ERROR, outcome.error if isinstance(outcome, Crashed) else outcome.failure.reason))


class RunDriver:
    def __init__(
        self, *, store: Store, agents: AgentFactory, settings: Settings, metrics: Metrics,
        reviewer: PlanReviewer | None, progress: Progress, prices: PriceTable, trips: TripTracer | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.agents = agents
        self.settings = settings
        self.metrics = metrics
        self.reviewer = reviewer
        self.progress = progress
        self.prices = prices
        self.trips = trips or TripTracer(None)
        self.clock = clock
        self._tz = ZoneInfo(settings.timezone)

    async def run(
        self, chat: ChatKey, session: SessionRow, steer: SteerBox, history: list[Message] | None = None,
        watch: RunWatch | None = None,
    ) -> RunOutcome:
        """Run until the agent asks, answers or fails. `history` saves the read when the caller
        knows it; `watch` follows what the run does. Cancellation propagates."""
        with self.trips.segment(chat, session) as span:
            outcome = await self._run(chat, session, steer, history, watch)
            if span.is_recording():
                _record_outcome(span, outcome)
            return outcome

    async def _run(
        self, chat: ChatKey, session: SessionRow, steer: SteerBox, history: list[Message] | None,
        watch: RunWatch | None,
    ) -> RunOutcome:
        started = time.perf_counter()
        agent: ToolCallAgent | None = None
        watch = watch if watch is not None else RunWatch()
        journal = StoreJournal(self.store, session, steer)
        watch.journal = journal
        outcome: RunOutcome
        try:
            agent = await self._build(session, history)
            outcome = await self._drive(chat, session, agent, journal, watch)
            await journal.settle()  # the outcome's write must find every step on disk
        except asyncio.CancelledError:
            # whoever stopped the run next reads its history: the step in flight lands first
            with contextlib.suppress(Exception):
                await asyncio.shield(journal.settle())
            if agent is not None and agent.usage.calls:  # a stopped run's model calls are still billed
                await asyncio.shield(self.save_usage(self.usage_of(session, agent, "stopped"), chat.platform))
            raise
        except Exception as exc:  # the process keeps serving other chats
            log.exception("run for %s crashed", chat)
            with contextlib.suppress(Exception):  # the chat task reads the history next
                await journal.settle()
            outcome = Crashed(f"{type(exc).__name__}: {exc}")
        finally:
            self.metrics.run_seconds.observe(time.perf_counter() - started)
        # the chat task stores the usage beside the outcome: one commit, not one more on the way
        if agent is None:
            return outcome
        return replace(outcome, usage=self.usage_of(session, agent, _OUTCOME_NAMES[type(outcome).__name__]))

    def usage_of(self, session: SessionRow, agent: ToolCallAgent, outcome: str) -> RunUsage:
        """Each segment builds its agent afresh, so its usage is this segment's share."""
        u, model = agent.usage, agent.model.name
        cost = self.prices.cost(model, u.prompt_tokens, u.completion_tokens)
        return RunUsage(session.id, session.run_no, model, u.prompt_tokens, u.completion_tokens, u.calls, cost,
                        agent.current_step, outcome)

    async def save_usage(self, usage: RunUsage | None, platform: str) -> None:
        """Store the segment's usage (beside its outcome's write) and count its cost."""
        if usage is None:
            return
        self.count_usage(usage, platform)
        with contextlib.suppress(Exception):  # accounting must never fail a run
            await self.store.add_usage(usage)

    def count_usage(self, usage: RunUsage | None, platform: str) -> None:
        """Count the segment's cost in the metrics (its write stores the usage itself)."""
        if usage is not None and usage.llm_calls:
            self.metrics.count_cost(platform, usage.model, usage.prompt_tokens, usage.completion_tokens, usage.cost_usd)

    async def _drive(self, chat: ChatKey, session: SessionRow, agent: ToolCallAgent, journal: StoreJournal,
                     watch: RunWatch) -> RunOutcome:
        run = RunInfo(session.id, session.lang, session.asker_id, session.asker_name, agent.max_steps,
                      run_ref(session.id, session.run_no), request=session.request)
        rounds = 0
        shown = ShownText()  # a text streamed and then not taken is withdrawn (TextReset) first
        reviewed: tuple[AnswerReady, Verdict | None] | None = None  # the answer the last review sent back
        while True:
            answer: AnswerReady | None = None
            failure: RunFailed | None = None
            async for event in agent.run(journal):
                await self._withdraw(chat, run, watch, shown.see(event))
                watch.see(event)
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
            if reviewed is not None and same_answer(answer, reviewed[0]):
                verdict, feedback = reviewed[1], None  # a re-plan that changed nothing: not reviewed, nor asked for, again
            else:
                verdict, feedback = await self._review(session, agent, answer, rounds)
            if feedback is not None:
                await self._withdraw(chat, run, watch, shown.withdraw())  # the answer shown is not the one
                rounds += 1
                reviewed = (answer, verdict)
                note = Message.user(f"[review] {feedback}", origin=Origin.REVIEW)  # the bot's note, not the person's words
                agent.memory.add(note)
                await journal.record([note], step=agent.current_step)
                continue
            pending, done = journal.take()
            tail = agent.memory.messages[-1] if agent.memory.messages else None
            if tail is None or tail.role is not Role.ASSISTANT or tail.tool_calls:
                pending.append(Message.assistant(answer.text))
            return Finished(pending, answer, verdict, agent.current_step, done)

    async def _withdraw(self, chat: ChatKey, run: RunInfo, watch: RunWatch, reset: TextReset | None) -> None:
        if reset is not None:
            watch.see(reset)
            await self.progress.show(chat, reset, run)

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


def same_answer(a: AnswerReady, b: AnswerReady) -> bool:
    """The same plan (or, without one, the same text): a re-plan that changed nothing."""
    if a.plan is not None and b.plan is not None:
        return bool(a.plan.model_dump() == b.plan.model_dump())
    return a.plan is None and b.plan is None and a.text.strip() == b.text.strip()
