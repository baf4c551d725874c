"""LiveRun: the one run a chat may have alive, as its actor (bot.chat.actor) holds it.

It keeps the run's task and the session it was started on, the messages the person sent
meanwhile (they steer the run at its next step, or wait for its question's answer), what the run
is doing now (a Stop says it and keeps its text), and the outcome the run reports, which the
actor applies in its own turn: `end()` stores it (bot.run.outcome) with its outbox rows. A run
the person stops (/cancel, /new, Stop) or whose question cannot be posted ends with `stop()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable

from agent_core.schema import Message
from bot import texts
from bot.chat.actor_deps import ActorDeps, state_of
from bot.chat.machine import Action, ChatState, Transition, Trigger
from bot.chat.notices import ChatNotices
from bot.delivery.bodies import notice_body
from bot.run.outcome import RunEnds
from bot.run.segment import RunOutcome, RunWatch, SteerBox
from bot.store.base import InboxRow, SessionRow
from bot.surface import ChatKey, Notice

log = logging.getLogger(__name__)


class DoubleRun(RuntimeError):
    """A second run was about to start in a chat whose run is alive (a bug: never allowed)."""


class LiveRun:
    def __init__(self, deps: ActorDeps, key: ChatKey, ends: RunEnds, notices: ChatNotices,
                 reported: Callable[[], None]) -> None:
        self.d = deps
        self.key = key
        self.skey = str(key)
        self._ends = ends
        self._notices = notices
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

    async def stop(self, t: Transition, row: InboxRow, session: SessionRow | None, lang: str, error: str) -> bool:
        """Stop the run (STOP_RUN, CLOSE, ABANDON): its open calls closed, its question cancelled,
        the notice said, the row done. True when rows it held must be read again."""
        watch = self.watch
        again = await self.cancel()
        if t.action is Action.ABANDON:
            assert session is not None
            log.warning("chat %s: its question could not be posted (%s); the run stops", self.skey, error)
            await self._ends.interrupt(session, texts.UNDELIVERABLE_CALL.format(reason=error), close=False, notice=None)
            await self.d.store.finish_inbox(row.id)
            self.d.metrics.runs.labels("undeliverable").inc()
            return again
        closing = t.action is Action.CLOSE
        notice = Notice("new" if closing else "cancelled", texts.text("new" if closing else "cancelled", lang))
        partial = watch.text() if session is not None and state_of(session) is ChatState.WORKING else ""
        if t.trigger is Trigger.STOP:
            notice = Notice("cancelled", texts.stopped_text(lang, watch.tool, partial))
        if session is not None:
            kept = watch.unsaved_results() if state_of(session) is ChatState.WORKING else []
            # what the person saw being written stays in the conversation (marked as cut short)
            after = [Message.assistant(f"{partial} …")] if partial and not closing else []
            result = texts.NEW_TRIP_CALL if closing else texts.CANCELLED_CALL
            await self._ends.interrupt(session, result, close=closing, notice=notice_body(notice, ends_run=True, lang=lang),
                                       kept=kept, after=after)
            self.d.deliver(self.skey, ())
            if state_of(session) is not ChatState.IDLE:
                self.d.metrics.runs.labels("cancelled").inc()
        else:
            await self._notices.say("", notice)
        await self.d.store.finish_inbox(row.id, drop_earlier=True)
        return again
