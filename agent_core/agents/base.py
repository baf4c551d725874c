"""BaseAgent: state, memory, the step budget and the run loop that yields events."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

from agent_core.errors import (
    AgentError,
    LLMError,
    LLMRequestRejected,
    LLMStreamBroken,
    LLMUnavailable,
    LoopDetected,
    StepLimitReached,
    TokenLimitExceeded,
)
from agent_core.events import Event, RunFailed
from agent_core.journal import NullJournal, RunJournal
from agent_core.memory import Memory
from agent_core.schema import AgentState


class BaseAgent(ABC):
    name: str = "agent"

    def __init__(self, *, memory: Memory | None = None, max_steps: int = 20, steps_taken: int = 0) -> None:
        self.memory = memory if memory is not None else Memory()
        self.max_steps = max_steps
        self.current_step = steps_taken  # resumed runs keep counting where they stopped
        self.state = AgentState.IDLE

    async def run(self, journal: RunJournal | None = None) -> AsyncIterator[Event]:
        """Run until an answer, a pause (WAITING) or a failure; yield events on the way.

        Model and agent faults end the run with a RunFailed event; the ask_human pause is a
        signal handled inside the step, and cancellation propagates.
        """
        journal = journal or NullJournal()
        self.state = AgentState.RUNNING
        try:
            while self.state is AgentState.RUNNING:
                if self.current_step >= self.max_steps and not self.memory.unanswered_calls():
                    raise StepLimitReached(self.max_steps)
                async for event in self.step(journal):
                    yield event
        except (LLMError, AgentError) as exc:
            self.state = AgentState.ERROR
            yield failure_event(exc)

    @abstractmethod
    def step(self, journal: RunJournal) -> AsyncIterator[Event]:
        """One step; sets self.state to FINISHED or WAITING when the run should stop."""


def failure_event(exc: Exception) -> RunFailed:
    """A RunFailed whose message says what happened and what to do (English; surfaces localise by reason)."""
    if isinstance(exc, TokenLimitExceeded):
        return RunFailed("token_limit", "The conversation is too long for the model. Send /new to start a fresh one.")
    if isinstance(exc, LLMRequestRejected):
        return RunFailed("llm_rejected", f"The model service refused the request ({exc.status_code}). Check the bot's model settings; your message is kept.")
    if isinstance(exc, LLMUnavailable):
        return RunFailed("llm_unavailable", "The model service is not reachable right now. Your message is kept; send it again in a minute.", retryable=True)
    if isinstance(exc, LLMStreamBroken):
        return RunFailed("llm_stream", "The model's reply broke off while it was being written. Your message is kept; send it again.", retryable=True)
    if isinstance(exc, StepLimitReached):
        return RunFailed("step_limit", f"I could not finish within {exc.max_steps} steps. Try a simpler request, or send more details.")
    if isinstance(exc, LoopDetected):
        return RunFailed("loop", "I got stuck repeating the same search. Please rephrase or add details.")
    return RunFailed("internal", f"Something went wrong: {exc}")
