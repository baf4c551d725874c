"""ChatActor: the one task that changes a chat.

It takes the chat's triggers one at a time, in order: the rows of its inbox (messages, commands,
and the events the deadline watcher, the start-up recovery and the delivery worker write there)
and the outcomes of the run it started. The walk of one inbox row:

    SessionManager.submit   stores the row in the chat's inbox (committed), wakes the actor
    ChatActor._step         reads the chat's pending rows with its session, in one read
    ChatActor._take         takes a row; one that fails is tried again, then set aside
    ChatActor._apply        the one place a row changes the chat: what the machine needs to
                            know (bot.chat.facts), the transition (bot.chat.machine.decide),
                            and carrying it out: one store transaction with its outbox rows;
                            for a turn or an answer, then the run (bot.chat.turn_steps,
                            LiveRun.start, bot.run.driver)
    LiveRun.end             stores how the run ended (bot.run.outcome), outbox rows with it
    DeliveryWorker          sends the outbox rows to the surface (bot.delivery.outbox)

The actor reads the chat *after* it has the trigger (it is the only writer: nothing changes
under it) and holds only a cache (bot.chat.live_run): when the chat is quiet it ends, and the
store has everything. What it says without a run is bot.chat.notices'. Under a lease
(PostgreSQL, bot.chat.live_chats) its writes carry the lease's fence; a write refused with
LeaseLost means another process owns the chat now: the actor ends at once, without a word.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from agent_core.schema import Message
from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.facts import read_facts
from bot.chat.live_run import DoubleRun, LiveRun
from bot.chat.machine import Action, ChatState, decide
from bot.chat.notices import ChatNotices
from bot.chat.suggestion_steps import ACTIONS as SUGGESTION_ACTIONS
from bot.chat.suggestion_steps import SuggestionSteps
from bot.chat.triggers import answer_lang, lang_hint
from bot.chat.turn_steps import TurnSteps
from bot.run.outcome import RunEnds
from bot.run.records import location_to_json
from bot.store.base import ChatView, InboxRow, LeaseLost
from bot.surface import ChatKey, Notice
from bot.team import signoff_steps
from bot.team.signoff_steps import SignoffSteps

log = logging.getLogger(__name__)

MAX_TRIES = 3  # attempts at one inbox row before it is set aside
RETRY_DELAY_S = 0.3

__all__ = ["ChatActor", "DoubleRun"]


class ChatActor:
    def __init__(self, key: ChatKey, deps: ActorDeps, on_quiet: Callable[[ChatActor], None],
                 on_lost: Callable[[ChatActor], None] | None = None) -> None:
        self.key = key
        self.skey = str(key)
        self.d = deps
        self._on_quiet = on_quiet
        self._on_lost = on_lost or on_quiet
        self._wake = asyncio.Event()
        # rows may wait in the store that this task has not read since: set by every wake but a
        # run's outcome, whose write adds no row (a step then skips the chat's read)
        self._rows = True
        self._failures: dict[int, int] = {}
        self._signoffs = SignoffSteps(deps, key)
        self._suggestions = SuggestionSteps(deps, key)
        self._ends = RunEnds(deps, key, self._signoffs)
        self._notices = ChatNotices(deps, key, self._signoffs.desk)
        # an outcome, no new row (rows that came during the run woke the chat)
        self._run = LiveRun(deps, key, self._ends, self._notices, reported=self._wake.set)
        self._turns = TurnSteps(deps, key, self._run)
        self.task = asyncio.create_task(self._loop(), name=f"chat:{self.skey}")

    @property
    def run_alive(self) -> bool:
        return self._run.alive

    def wake(self) -> None:
        self._rows = True
        self._wake.set()

    async def stop(self) -> None:
        tasks = (self.task, self._run.task)
        for task in tasks:
            if task is not None:
                task.cancel()
        for task in tasks:
            if task is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    # -- the loop ----------------------------------------------------------------------------
    async def _loop(self) -> None:
        self.d.logs.bind(self.skey)
        while True:
            self._wake.clear()
            try:
                more = await self._step()
            except asyncio.CancelledError:
                raise
            except LeaseLost as exc:  # another process owns the chat now: nothing more from here
                log.warning("chat %s: %s", self.skey, exc)
                self._on_lost(self)
                return
            except Exception:  # the store is unwell: try again, never drop the chat's work
                log.exception("chat %s could not take its next trigger; retrying", self.skey)
                await asyncio.sleep(RETRY_DELAY_S * 3)
                continue
            if not more and not self._run.alive and not self._run.outcomes and not self._wake.is_set():
                self._on_quiet(self)
                return
            await self._wake.wait()

    async def _step(self) -> bool:
        """Apply what is waiting, a run's outcome first; True when a row must be tried again later."""
        while self._run.outcomes:
            if await self._run.end(self._run.outcomes.popleft()):
                self.wake()
        if not self._rows:  # woken by an outcome alone: nothing new to read
            return False
        self._rows = False  # cleared before the read: a wake during it reads again
        try:
            view = await self._view()
            for row in view.rows if view is not None else await self.d.store.inbox_for(self.skey):
                if self._run.holds(row.id):
                    continue
                if self._run.outcomes:  # the run ended meanwhile: its outcome comes first
                    self.wake()  # (and the rows after it)
                    return False
                applied = await self._take(row, view)
                if applied is False:
                    return True
                if applied:  # the chat has changed: the next row reads it again
                    view = None
        except BaseException:
            self._rows = True  # read again on the next step
            raise
        return False

    async def _view(self) -> ChatView | None:
        """The chat's rows with its session and questions, in one read; None when that read fails
        (a damaged session or question): each row is then tried on its own, and set aside with
        a word to the person if it keeps failing, instead of the whole chat stalling."""
        try:
            return await self.d.store.chat_view(self.skey)
        except (asyncio.CancelledError, LeaseLost):
            raise
        except Exception as exc:
            log.warning("chat %s: its view could not be read (%s); reading row by row", self.skey, exc)
            return None

    async def _take(self, row: InboxRow, view: ChatView | None) -> bool | None:
        """True: applied (or set aside); False: failed, tried again shortly; None: it waits for
        its question's posting to be recorded (bot.chat.facts)."""
        try:
            if not await self._apply(row, view):
                return None
        except (asyncio.CancelledError, LeaseLost):
            raise
        except Exception as exc:
            tries = self._failures.get(row.id, 0) + 1
            self._failures[row.id] = tries
            if tries < MAX_TRIES:
                log.warning("chat %s: row %s failed (%s), try %d", self.skey, row.id, exc, tries, exc_info=True)
                asyncio.get_running_loop().call_later(RETRY_DELAY_S * tries, self.wake)
                return False
            self._failures.pop(row.id, None)
            log.exception("chat %s: set aside row %s after %d tries", self.skey, row.id, tries)
            await self.d.store.fail_inbox(row.id, f"{type(exc).__name__}: {exc}")
            self.d.metrics.inbox_set_aside.inc()
            lang = (row.body and lang_hint(row.body)) or "zh"
            await self._notices.say("", Notice("error", texts.error_text("internal", lang)))
        self._failures.pop(row.id, None)
        return True

    # -- one inbox row: the facts, the transition, and carrying it out -------------------------
    async def _apply(self, row: InboxRow, view: ChatView | None) -> bool:
        """The one place a row changes the chat: what the machine needs to know, its transition,
        and carrying it out. False when the row must wait (bot.chat.facts). `view`: the chat as
        read with the row, while nothing has changed it since."""
        seen = await read_facts(self.d.store, self.skey, row, view, self._run.alive, self._suggestions,
                                self.d.signs_off(self.key))
        if seen is None:
            return False
        self.d.logs.bind(self.skey, seen.session)
        t = decide(seen.state, seen.trig.trigger, seen.facts)
        msg, session, question = seen.trig.msg, seen.session, seen.question
        lang = answer_lang(session, seen.trig)
        store = self.d.store
        if t.action in signoff_steps.ACTIONS:
            assert session is not None and seen.signoff is not None
            step = await self._signoffs.apply(t, seen.trig, session, seen.signoff)
            if step.replan is not None:
                self._run.start(step.replan)
            if step.notice is not None:
                await self._notices.say(session.id, step.notice)
            self.d.deliver(self.skey, step.queued)
            return True
        if t.action in SUGGESTION_ACTIONS:
            said = await self._suggestions.apply(t, seen.trig, session, seen.said, seen.waiting, lang)
            if said.notice is not None:
                await self._notices.say(session.id if session else "", said.notice)
            self.d.deliver(self.skey, said.queued)
            if said.woken:  # the accepted suggestion waits in the inbox as the requester's change
                self.wake()
            return True
        if msg is not None and t.action in (Action.START_RUN, Action.STEER, Action.HOLD) and not row.noticed:
            absent = await self._suggestions.absent(msg)  # said before the turn's own words
            if absent is not None:
                await self._notices.say(session.id if session else "", absent)
        if t.action is Action.START_RUN:
            assert msg is not None
            await self._turns.start(row, msg, session, seen.history)
        elif t.action in (Action.STEER, Action.HOLD):
            assert msg is not None
            self._run.steer(row.id, Message.user(msg.text.strip(), sender=msg.sender))
            await self._notices.held(t, row, msg, session, seen.waiting, lang)
        elif t.action in (Action.ANSWER, Action.ANSWER_ONE):
            assert msg is not None and session is not None and question is not None
            await self._turns.answer(row, msg, session, question, seen.history, resume=t.target is ChatState.WORKING)
        elif t.action in (Action.EXPIRE, Action.EXPIRE_ONE):
            assert session is not None and question is not None
            await self._turns.expire(row, session, question, seen.history, resume=t.target is ChatState.WORKING)
        elif t.action is Action.RESUME_RUN:
            assert session is not None
            await store.finish_inbox(row.id)
            self._run.start(session)
        elif t.action is Action.REMEMBER_LOCATION:
            assert msg is not None
            await store.remember_location(self.skey, location_to_json(msg.location) or "", lang)
            await store.finish_inbox(row.id)
            await self._notices.say(session.id if session else "", Notice("info", texts.text("location_saved", lang)))
        elif t.action in (Action.STOP_RUN, Action.CLOSE, Action.ABANDON):
            if await self._run.stop(t, row, session, lang, seen.trig.data.get("error", "")):
                self.wake()  # what the stopped run never read is read again, as the chat now is
        elif t.action is Action.REMIND:
            assert session is not None and question is not None
            await self._notices.remind(row, session, question)
        elif t.action is Action.SET_APPROVER:
            assert msg is not None
            await store.finish_inbox(row.id)
            await self._notices.say(session.id if session else "", await self._signoffs.desk.set_approver(msg, lang))
        elif t.action is Action.NO_APPROVERS_HERE:
            await store.finish_inbox(row.id)
            await self._notices.say(session.id if session else "", Notice("info", texts.text("approver_elsewhere", lang)))
        elif t.action in (Action.REPLY, Action.NOTHING_TO_CANCEL, Action.STALE, Action.REFUSE):
            await store.finish_inbox(row.id)
            reply = await self._notices.reply(t, session, lang, seen.trig.data.get("unknown", ""))
            await self._notices.say(session.id if session else "", reply)
        else:  # IGNORE
            await store.finish_inbox(row.id)
        return True
