"""LiveRun: the one run a chat may have alive, as its actor (bot.chat.actor) holds it.

It keeps the run's task and the session it was started on, the messages the person sent
meanwhile (they steer the run at its next step, or wait for its question's answer), what the run
is doing now (a Stop says it and keeps its text), and the outcome the run reports, which the
actor applies in its own turn: `end()` stores it (bot.run.outcome) with its outbox rows.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable

from agent_core.schema import Message
from bot.chat.actor_deps import ActorDeps
from bot.chat.machine import ChatState
from bot.run.driver import RunOutcome, RunWatch, SteerBox
from bot.run.outcome import RunEnds
from bot.store.base import SessionRow
from bot.surface import ChatKey


class DoubleRun(RuntimeError):
    """A second run was about to start in a chat whose run is alive (a bug: never allowed)."""


class LiveRun:
    def __init__(self, deps: ActorDeps, key: ChatKey, ends: RunEnds, reported: Callable[[], None]) -> None:
        self.d = deps
        self.key = key
        self.skey = str(key)
        self._ends = ends
        self._reported = reported  # the run ended: its outcome waits for the actor
        self.task: asyncio.Task[None] | None = None
        self.session: SessionRow | None = None
        self.watch = RunWatch()
        self.outcomes: deque[RunOutcome] = deque()
        self._steer = SteerBox()
        self._handled: set[int] = set()  # rows steering the run (or held for it), still pending in the store

    @property
    def alive(self) -> bool:
        return self.task is not None

    def start(self, session: SessionRow, history: list[Message] | None = None) -> None:
        """Run the agent on `session`, whose start is committed; `history`: its messages, when known."""
        if self.task is not None:
            raise DoubleRun(f"chat {self.skey} already has a run")
        self.session = session
        self.d.logs.bind(self.skey, session)  # the run's task starts with this chat's fields
        self.watch = RunWatch()
        self.task = asyncio.create_task(self._run(session, history, self.watch), name=f"run:{self.skey}")

    async def _run(self, session: SessionRow, history: list[Message] | None, watch: RunWatch) -> None:
        outcome = await self.d.driver.run(self.key, session, self._steer, history, watch=watch)
        self.outcomes.append(outcome)
        self._reported()

    def steer(self, inbox_id: int, message: Message) -> None:
        """The run takes `message` at its next step; its row stays pending until that step is stored."""
        self._steer.offer(inbox_id, message)
        self._handled.add(inbox_id)

    def holds(self, inbox_id: int) -> bool:
        return inbox_id in self._handled

    async def cancel(self) -> bool:
        """Stop the run (its outcome is moot) and drop what it was to read: True when rows it held
        must be read again, as the chat now is."""
        task, self.task = self.task, None
        self.outcomes.clear()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._steer.take()
        held = bool(self._handled)
        self._handled.clear()
        return held

    async def end(self, outcome: RunOutcome) -> bool:
        """Store how the run ended and hand its rows to the delivery worker: True when rows it
        never took must be read again (a new turn now)."""
        self.task = None
        assert self.session is not None
        t, queued = await self._ends.write(self.session, outcome)
        self.d.deliver(self.skey, queued)
        again = False
        if t.target is not ChatState.ASKING:  # what the run never took is a new turn now
            for inbox_id in self._steer.left():
                self._handled.discard(inbox_id)
                again = True
            self._steer.take()
        self._handled.difference_update(getattr(outcome, "inbox_done", ()))
        return again
