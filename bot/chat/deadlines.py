"""DeadlineWatcher: one task for every question's deadline and reminder (and every sign-off's
reminder and deadline), however many wait.

Deadlines live in the store (they survive restarts); the watcher sleeps until the earliest
one (at most `max_sleep_s`, and less when a new question wakes it). It never touches a chat:
for each due question it writes an `expired` event to the chat's inbox (once: the event's id
is the question's), for each due reminder a `remind` event (likewise), and wakes the chat,
whose own task decides. No timer is held per question,
so ten thousand parked sessions cost nothing here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import Callable

from bot.background import stop_task
from bot.store.base import ChatEvent, QuestionRow, Store

log = logging.getLogger(__name__)


class DeadlineWatcher:
    def __init__(
        self,
        store: Store,
        wake_chat: Callable[[str], None],
        clock: Callable[[], float],
        max_sleep_s: float = 30.0,
    ) -> None:
        self.store = store
        self.wake_chat = wake_chat
        self._told: set[tuple[str, str]] = set()  # questions whose expiry is in an inbox already
        self._reminded: set[tuple[str, str]] = set()  # questions whose reminder is in an inbox already
        self.clock = clock
        self.max_sleep_s = max_sleep_s
        self._wakeup = asyncio.Event()
        self._planned = math.inf  # when the watcher looks next (inf: it is looking now)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="deadline-watcher")

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None

    def wake(self, deadline: float) -> None:
        """A question was stored: look again if its deadline comes before the next look (most
        deadlines are hours away: the store is not read for them now)."""
        if deadline < self._planned:
            self._wakeup.set()

    async def _run(self) -> None:
        while True:
            try:
                await self._once()
            except asyncio.CancelledError:
                raise
            except Exception:  # the watcher must outlive a bad row or a busy database
                log.exception("deadline watcher failed; retrying")
                await asyncio.sleep(1)

    async def _once(self) -> None:
        self._wakeup.clear()  # a question stored from here on is either read below or wakes the wait
        self._planned = math.inf
        now = await self.check_now()
        nxt = await self.store.next_deadline(after=now)
        delay = self.max_sleep_s if nxt is None else max(0.0, min(self.max_sleep_s, nxt - self.clock()))
        if delay > 0:
            self._planned = self.clock() + delay
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._wakeup.wait()

    async def check_now(self) -> float:
        """Tell the chats of every question due by now, and of every reminder due (once each);
        returns the `now` it used."""
        now = self.clock()
        due = await self.store.due_questions(now)
        await self._tell("expired", [q for q in due if (q.session_id, q.tool_call_id) not in self._told])
        self._told = {(q.session_id, q.tool_call_id) for q in due}  # forget the ones resolved since
        # a question past its deadline is expired, not reminded
        to_remind = [q for q in await self.store.due_reminders(now) if q.deadline > now]
        await self._tell("remind", [q for q in to_remind if (q.session_id, q.tool_call_id) not in self._reminded])
        self._reminded = {(q.session_id, q.tool_call_id) for q in to_remind}
        await self._signoffs(now)
        return now

    async def _tell(self, kind: str, questions: list[QuestionRow]) -> None:
        """One `kind` event per question in its chat's inbox; the event's id is the question's,
        so the same event written again (another check, another process) is stored once."""
        if not questions:
            return
        events, keys = [], []
        for q in questions:
            session = await self.store.session_by_id(q.session_id)
            if session is None:
                continue
            body = json.dumps({"session_id": q.session_id, "tool_call_id": q.tool_call_id})
            events.append(ChatEvent(session.chat_key, kind, body, f"{kind}:{q.session_id}:{q.tool_call_id}"))
            keys.append(session.chat_key)
        await self.store.add_events(events)
        for key in keys:
            self.wake_chat(key)

    async def _signoffs(self, now: float) -> None:
        """A sign-off's reminder (once) and its deadline become events of its chat, like an expiry;
        the store keeps each event once (its id names the sign-off)."""
        due = await self.store.due_signoffs(now)
        events = []
        for g in due:
            kind = "overdue" if g.deadline <= now else "reminder"
            events.append(ChatEvent(g.chat_key, kind, json.dumps({"signoff_id": g.id}), f"{kind}:{g.id}"))
        if events:
            await self.store.add_events(events)
            for key in dict.fromkeys(e.chat_key for e in events):
                self.wake_chat(key)
