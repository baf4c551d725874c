"""The run journal: where an agent writes its progress durably before acting on it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from agent_core.schema import Message


@dataclass(frozen=True, slots=True)
class PendingAsk:
    """A question waiting for the person, stored as data so it survives restarts."""

    tool_call_id: str
    question: str
    options: tuple[str, ...] = ()


class RunJournal(Protocol):
    def incoming(self) -> Sequence[Message]:
        """Messages the person sent while the run worked, to add before the next model call (they
        steer the run); the journal writes them with that step."""
        ...

    async def record(
        self, messages: Sequence[Message], *, step: int, defer: bool = False, wait: bool = True
    ) -> None:
        """Append messages in one transaction, before the agent acts on them.

        `defer=True` (tool results: they can be produced again) lets the journal keep them until
        its next write, so a step costs one commit: a crash in between re-runs those tools.
        `wait=False` (a reply whose tools only read) returns before the commit: the agent runs
        those tools meanwhile, and every later write of the journal waits for this one first."""

    async def settle(self) -> None:
        """Return once every write started is on disk (raise what one of them raised)."""

    async def pause(self, messages: Sequence[Message], ask: PendingAsk, *, step: int) -> None:
        """Append messages and store the pending question, in one transaction."""


class NullJournal:
    """A journal that keeps nothing (scripts and benchmarks without durability)."""

    def incoming(self) -> Sequence[Message]:
        return ()

    async def record(
        self, messages: Sequence[Message], *, step: int, defer: bool = False, wait: bool = True
    ) -> None:
        return None

    async def settle(self) -> None:
        return None

    async def pause(self, messages: Sequence[Message], ask: PendingAsk, *, step: int) -> None:
        return None
