"""One segment of a run, apart from the loop that drives it (bot.run.driver): what it ends with
(RunOutcome: Paused, Finished, Failed, Crashed), its journal on the store (StoreJournal: each
model reply written before its tools act, tool results and steering with the next write), the
messages the person sent while it works (SteerBox) and what it is doing now (RunWatch, for a
Stop to say and to keep).

The chat's actor holds the SteerBox and the RunWatch of the run it started (bot.chat.live_run)
and stores the RunOutcome the driver returns (bot.run.outcome).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.events import (
    AnswerReady,
    Event,
    RunFailed,
    StepStarted,
    TextDelta,
    TextReset,
    Thought,
    ToolCalled,
    ToolFinished,
    Verdict,
)
from agent_core.journal import PendingAsk
from agent_core.schema import Message, Role
from bot.store.base import RunUsage, SessionRow, Store


@dataclass(frozen=True, slots=True)
class Paused:
    messages: list[Message]  # the step's messages, not yet stored: they ride with the pause
    asks: tuple[PendingAsk, ...]  # asked at once (one per person on a team trip)
    step: int
    inbox_done: list[int]
    usage: RunUsage | None = None  # the segment's model calls, stored with the outcome


@dataclass(frozen=True, slots=True)
class Finished:
    messages: list[Message]
    answer: AnswerReady
    verdict: Verdict | None
    steps: int
    inbox_done: list[int]
    usage: RunUsage | None = None


@dataclass(frozen=True, slots=True)
class Failed:
    failure: RunFailed
    messages: list[Message]
    inbox_done: list[int]
    usage: RunUsage | None = None


@dataclass(frozen=True, slots=True)
class Crashed:
    error: str
    usage: RunUsage | None = None


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
    behind: asyncio.Future[Any] | None = None  # a write not waited for: a read-only step's

    def incoming(self) -> Sequence[Message]:
        taken = self.steer.take()
        messages = [m for _, m in taken]
        self.deferred.extend(messages)
        self.inbox_done.extend(i for i, _ in taken)
        return messages

    async def record(
        self, messages: Sequence[Message], *, step: int, defer: bool = False, wait: bool = True
    ) -> None:
        if defer:
            self.deferred.extend(messages)
            return
        await self.settle()
        pending, done = self.take()
        write = self.store.append(self.session.id, pending + list(messages), step=step, inbox_done=done)
        if wait:
            await write
        else:
            self.behind = asyncio.ensure_future(write)

    async def settle(self) -> None:
        behind, self.behind = self.behind, None
        if behind is not None:  # stopping the run must not cancel a write under way
            await asyncio.shield(behind)

    async def pause(self, messages: Sequence[Message], asks: Sequence[PendingAsk], *, step: int) -> None:
        pending, done = self.take()
        self.paused = Paused(pending + list(messages), tuple(asks), step, done)

    def take(self) -> tuple[list[Message], list[int]]:
        out, self.deferred = self.deferred, []
        done, self.inbox_done = self.inbox_done, []
        return out, done


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



@dataclass
class RunWatch:
    """What a run is doing right now, for a Stop to say and to keep: the tool running ("" while
    the model writes), the visible text the model has written in this step and not yet stored,
    and the step's journal (its tool results wait there for the next write)."""

    tool: str = ""
    partial: list[str] = field(default_factory=list)
    journal: StoreJournal | None = None

    def see(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.partial.append(event.text)
        elif isinstance(event, TextReset):  # withdrawn: a Stop now keeps none of it
            self.partial = []
        elif isinstance(event, StepStarted | Thought | AnswerReady):  # the step's text is stored from here
            self.tool, self.partial = "", []
        elif isinstance(event, ToolCalled):
            self.tool, self.partial = event.name, []
        elif isinstance(event, ToolFinished):
            self.tool = ""

    def text(self) -> str:
        return "".join(self.partial).strip()

    def unsaved_results(self) -> list[Message]:
        """Tool results made but not yet written (they ride with the next model reply)."""
        pending = self.journal.deferred if self.journal is not None else []
        return [m for m in pending if m.role is Role.TOOL]

