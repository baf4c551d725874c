"""ChatActor: the one task that changes a chat.

It takes the chat's triggers one at a time, in order — the rows of its inbox (messages,
commands, and the events the deadline watcher, the start-up recovery and the delivery worker
write there) and the outcomes of the run it started — loads the chat's state from the store
*after* it has the trigger (it is the only writer, so nothing changes under it), asks
bot.chat.machine.decide what to do, and does it: every state change is one store transaction,
together with its outbox row. It holds only a cache: the run's task, the messages the run is
to see at its next step. When the chat is quiet the actor ends; the store has everything.
What a run's end writes is bot.run.outcome's, the sign-off decisions bot.team.signoff_steps', and the
session a run starts with (before its write commits) bot.run.start's.

With several processes (PostgreSQL) the actor runs under its chat's lease, and its writes carry
the lease's fence (bot.sessions). A write refused with LeaseLost means another process owns the
chat now: the actor ends at once, without retrying and without a word to the chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from agent_core.schema import Message
from bot import texts
from bot.chat.actor_deps import ActorDeps, state_of
from bot.chat.addressing import bound_question, refused
from bot.chat.commands import status_text
from bot.chat.machine import Action, ChatState, Facts, Transition, Trigger, decide
from bot.chat.staged_rows import StagedRows, after
from bot.chat.suggestion_steps import ACTIONS as SUGGESTION_ACTIONS
from bot.chat.suggestion_steps import SuggestionSteps
from bot.chat.triggers import RowTrigger, answer_lang, classify, lang_hint
from bot.delivery.bodies import notice_body
from bot.run.driver import RunOutcome, RunWatch, SteerBox
from bot.run.outcome import RunEnds
from bot.run.records import location_to_json
from bot.run.start import resolved, resumed, turn_session
from bot.store.base import (
    ChatView,
    InboxRow,
    LeaseLost,
    OutboxRow,
    QuestionRow,
    SessionRow,
    TurnStart,
)
from bot.surface import ChatKey, IncomingMessage, Notice, run_ref
from bot.team import signoff_steps
from bot.team.signoff import is_approver
from bot.team.signoff_steps import SignoffSteps

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_TRIES = 3  # attempts at one inbox row before it is set aside
RETRY_DELAY_S = 0.3


class DoubleRun(RuntimeError):
    """A second run was about to start in a chat whose run is alive (a bug: never allowed)."""


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
        # (session id, its messages) as read with the chat's view of the row being applied
        self._history: tuple[str, list[Message]] | None = None
        # the commit of the row being applied, when it is staged and a run may start ahead of it
        self._row_commit: asyncio.Future[Any] | None = None
        self._outcomes: deque[RunOutcome] = deque()
        self._steer = SteerBox()
        self._handled: set[int] = set()  # rows steering the run (or held for it), still pending in the store
        self._failures: dict[int, int] = {}
        self._staged = StagedRows()  # rows handed over by this process before their commit
        self._run_session: SessionRow | None = None
        self._watch = RunWatch()  # what the current run is doing (a Stop says it and keeps its text)
        self._signoffs = SignoffSteps(deps, key)
        self._suggestions = SuggestionSteps(deps, key)
        self._ends = RunEnds(deps, key, self._signoffs)
        self.run_task: asyncio.Task[None] | None = None
        self.task = asyncio.create_task(self._loop(), name=f"chat:{self.skey}")

    @property
    def run_alive(self) -> bool:
        return self.run_task is not None

    def wake(self) -> None:
        self._rows = True
        self._wake.set()

    def stage(self, row: InboxRow, committed: asyncio.Future[Any]) -> None:
        """A row this process is committing: the chat may begin on it before the view shows it,
        but stores and sends nothing of it before the commit (bot.chat.staged_rows)."""
        self._staged.add(row, committed)

    async def stop(self) -> None:
        for task in (self.task, self.run_task):
            if task is not None:
                task.cancel()
        for task in (self.task, self.run_task):
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
            if not more and self.run_task is None and not self._outcomes and not self._wake.is_set():
                self._on_quiet(self)
                return
            await self._wake.wait()

    async def _step(self) -> bool:
        """Apply what is waiting; True when a row must be tried again later. A message that may
        answer a question whose posting is not recorded yet waits (commands and events after it
        do not): the delivery worker wakes the chat once it is recorded (SessionManager,
        on_posted)."""
        while self._outcomes:
            await self._apply_outcome(self._outcomes.popleft())
        if not self._rows:  # woken by an outcome alone: nothing new to read
            return False
        self._rows = False  # cleared before the read: a wake during it reads again
        try:
            view = await self._view()
            for row in self._staged.merge(view.rows if view is not None else await self.d.store.inbox_for(self.skey)):
                if row.id in self._handled:
                    continue
                if self._outcomes:  # the run ended meanwhile: its outcome comes first
                    self.wake()  # (and the rows after it)
                    return False
                applied = await self._try_row(row, view)
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

    async def _try_row(self, row: InboxRow, view: ChatView | None) -> bool | None:
        """True: applied (or set aside); False: failed, tried again shortly; None: it waits for
        its question's posting to be recorded."""
        try:
            if not await self._apply_row(row, view):
                return None
        except (asyncio.CancelledError, LeaseLost):
            raise
        except Exception as exc:
            if self._staged.never_stored(row.id):  # nothing to retry (the sender was told)
                self._staged.done(row.id)
                return True
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
            await self._notice("", Notice("error", texts.error_text("internal", lang)))
        self._failures.pop(row.id, None)
        self._staged.done(row.id)
        return True

    # -- inbox rows -------------------------------------------------------------------------
    async def _apply_row(self, row: InboxRow, view: ChatView | None) -> bool:
        """Apply the row; False when it must wait (see _step). `view`: the chat as read with the
        row, while nothing has changed it since."""
        if view is not None and view.session is not None and view.history is not None:
            self._history = (view.session.id, view.history)
        try:
            return await self._apply_row_now(row, view)
        finally:
            self._history = self._row_commit = None  # this row's: never used for another

    async def _apply_row_now(self, row: InboxRow, view: ChatView | None) -> bool:
        trig = classify(row)
        session = view.session if view is not None else await self.d.store.get_session(self.skey)
        self.d.logs.bind(self.skey, session)
        state = state_of(session)
        if view is not None:
            waiting = view.questions
        else:
            waiting = await self.d.store.questions_for_chat(self.skey) if state is ChatState.ASKING else []
        if trig.trigger is Trigger.MESSAGE and any(q.posted_after is None for q in waiting):
            if await self._being_posted(waiting):
                # Whether this message came after the question (and answers it) is known once the
                # posting is recorded with its watermark. Deciding now would hold back an answer
                # another process stored before this one recorded the posting.
                return False
            # The posting may have been recorded between the two reads (the outbox row is sent,
            # the questions were read before): read them again, or an answer given after the
            # question appeared is taken for a message sent before it, and the chat waits for
            # an answer it already has (1 of 150 conversations in bench_pg_cluster.py).
            waiting = await self.d.store.questions_for_chat(self.skey)
        bound = bound_question(row, trig.msg, waiting, session) if trig.msg is not None else None
        current = next((q for q in waiting if q.tool_call_id == trig.data.get("tool_call_id")
                        and q.session_id == trig.data.get("session_id")), None)
        question = bound or current
        signoff = await self.d.store.signoff_for_chat(self.skey) if state is ChatState.SIGNOFF else None
        named = trig.msg.question_id if trig.msg is not None else trig.data.get("signoff_id")
        open_signoff = signoff is not None and signoff.open
        said = await self._suggestions.read(trig, session, signoff, lambda: self._peek_messages(session))
        facts = Facts(
            answers=bound is not None, idle_run=self.run_task is None,
            current=current is not None or (open_signoff and signoff is not None and named == signoff.id)
            or (trig.trigger is Trigger.STOP and _for_run_working(trig.msg, session)) or said.current,
            last=question is None or len(waiting) == 1,
            approver=signoff is not None and trig.msg is not None and is_approver(trig.msg, signoff.approvers),
            reason=signoff is not None and signoff.status == "rejecting" and trig.msg is not None
            and trig.msg.user_id == signoff.decided_by,
            asker=trig.msg is not None and (not trig.msg.is_group or trig.msg.user_id == (session.asker_id if session else "")),
            entitled=said.entitled,
        )
        t = decide(state, trig.trigger, facts)
        gate = self._staged.gate(row)
        if gate is not None and not _starts_a_run(t, trig):
            await asyncio.shield(gate)  # only a run's start goes ahead of its message's commit (_run_behind)
            gate = None
        self._row_commit = gate
        if t.action in signoff_steps.ACTIONS:
            assert session is not None and signoff is not None
            step = await self._signoffs.apply(t, trig, session, signoff)
            if step.replan is not None:
                self._spawn(step.replan)
            if step.notice is not None:
                await self._notice(session.id, step.notice)
            self.d.deliver(self.skey, step.queued)
            return True
        if t.action in SUGGESTION_ACTIONS:
            said_step = await self._suggestions.apply(t, trig, session, said, waiting, answer_lang(session, trig))
            if said_step.notice is not None:
                await self._notice(session.id if session else "", said_step.notice)
            self.d.deliver(self.skey, said_step.queued)
            if said_step.woken:  # the accepted suggestion waits in the inbox as the requester's change
                self.wake()
            return True
        if trig.msg is not None and t.action in (Action.START_RUN, Action.STEER, Action.HOLD) and not row.noticed:
            absent = await self._suggestions.absent(trig.msg)  # said before the turn's own words
            if absent is not None:
                await self._notice(session.id if session else "", absent)
        await self._do(t, trig, session, question, waiting)
        return True

    async def _do(self, t: Transition, trig: RowTrigger, session: SessionRow | None, question: QuestionRow | None,
                  waiting: Sequence[QuestionRow] = ()) -> None:
        row, msg = trig.row, trig.msg
        lang = answer_lang(session, trig)
        store = self.d.store
        if t.action is Action.START_RUN:
            assert msg is not None
            await self._start_turn(row, msg, session)
        elif t.action in (Action.STEER, Action.HOLD):
            assert msg is not None
            self._steer.offer(row.id, Message.user(msg.text.strip(), sender=msg.sender))
            self._handled.add(row.id)
            # stored with the row: no later actor (or process) says it again; an accepted suggestion
            # was said to be taken into account with the Yes
            if not row.noticed and not msg.adopted_by:
                body = notice_body(self._held_notice(t, msg, waiting, lang))
                session_id = session.id if session else ""
                out_id = await self.d.store.notice_inbox(row.id, self.skey, session_id, body)
                self.d.deliver(self.skey, [OutboxRow(out_id, session_id, self.skey, "notice", body, self.d.clock())])
        elif t.action in (Action.ANSWER, Action.ANSWER_ONE):
            assert msg is not None and session is not None and question is not None
            await self._answer(row, msg, session, question, resume=t.target is ChatState.WORKING)
        elif t.action in (Action.EXPIRE, Action.EXPIRE_ONE):
            assert session is not None and question is not None
            hours = round(self.d.settings.human_timeout_s / 3600, 2)
            answer = Message.tool(texts.NO_ANSWER.format(hours=hours), tool_call_id=question.tool_call_id, name="ask_human")
            if t.target is ChatState.WORKING:  # the last question: the run goes on
                await self._resume(session, answer, "expired", row)
            else:
                await resolved(store, session.id, answer, "expired", row.id)
        elif t.action is Action.RESUME_RUN:
            assert session is not None
            await store.finish_inbox(row.id)
            self._spawn(session)
        elif t.action is Action.REMEMBER_LOCATION:
            assert msg is not None
            await store.remember_location(self.skey, location_to_json(msg.location) or "", lang)
            await store.finish_inbox(row.id)
            await self._notice(session.id if session else "", Notice("info", texts.text("location_saved", lang)))
        elif t.action in (Action.STOP_RUN, Action.CLOSE, Action.ABANDON):
            await self._stop(t, row, session, lang, trig.data.get("error", ""))
        elif t.action is Action.REMIND:
            assert session is not None and question is not None
            await self._remind(row, session, question)
        elif t.action is Action.SET_APPROVER:
            assert msg is not None
            await store.finish_inbox(row.id)
            await self._notice(session.id if session else "", await self._signoffs.desk.set_approver(msg, lang))
        elif t.action in (Action.REPLY, Action.NOTHING_TO_CANCEL, Action.STALE, Action.REFUSE):
            await store.finish_inbox(row.id)
            await self._notice(session.id if session else "", await self._reply(t, session, lang, trig.data.get("unknown", "")))
        else:  # IGNORE
            await store.finish_inbox(row.id)

    async def _being_posted(self, questions: Sequence[QuestionRow]) -> bool:
        """A question not yet recorded as posted still has its outbox row to deliver (not failed, not sent)."""
        unposted = {q.tool_call_id for q in questions if q.posted_after is None}
        return any(r.kind == "question" and r.tool_call_id in unposted
                   for r in await self.d.store.pending_outbox(self.skey))

    async def _start_turn(self, row: InboxRow, msg: IncomingMessage, session: SessionRow | None) -> None:
        lang = texts.detect_lang(msg.text, session.lang if session else (msg.lang or "zh"))
        new_id = "" if session else uuid.uuid4().hex
        request = msg.text.strip()[:2000]
        asker_id, asker_name = msg.user_id, msg.user_name
        if session is not None and msg.is_group and msg.user_id != session.asker_id:
            # a traveller's own legs, a thanks, an accepted suggestion: the trip stays the
            # requester's (only an accepted suggestion changes what was asked)
            asker_id, asker_name = session.asker_id, session.asker_name
            request = request if msg.adopted_by else session.request
        trip = self.d.driver.trips.new_trip(self.key, session.id if session else new_id,
                                            session.run_no + 1 if session else 1, request)
        turn = TurnStart(
            chat_key=self.skey, inbox_id=row.id, message=Message.user(msg.text.strip(), sender=msg.sender), lang=lang,
            asker_id=asker_id, asker_name=asker_name, request=request,
            location=location_to_json(msg.location), new_session_id=new_id, trace_parent=trip,
        )
        fresh = turn_session(session, turn, self.d.clock())
        # the history is read before the write, which adds the message to it
        history = [] if fresh.run_no == 1 else await self._messages(fresh.id)
        stored = await self._run_behind(fresh, [*history, turn.message], self.d.store.start_turn(turn))
        assert stored.id == fresh.id, "start_turn wrote another session than the chat task runs"

    def _held_notice(self, t: Transition, msg: IncomingMessage, waiting: Sequence[QuestionRow], lang: str) -> Notice:
        if t.action is Action.HOLD and (other := refused(msg, waiting)) is not None:
            return Notice("refused", texts.text("not_yours", lang, who=other.addressee))
        return Notice("queued", texts.text("steered" if t.action is Action.STEER else "held", lang))

    async def _answer(self, row: InboxRow, msg: IncomingMessage, session: SessionRow, question: QuestionRow, *,
                      resume: bool) -> None:
        content = msg.text.strip()
        if msg.location is not None:
            loc = f"(shared location: {msg.location.latitude:.5f}, {msg.location.longitude:.5f})"
            content = f"{content} {loc}".strip()
            location = location_to_json(msg.location) or ""
            await self.d.store.remember_location(self.skey, location, session.lang)
            session = replace(session, location=location)
        answer = Message.tool(content, tool_call_id=question.tool_call_id, name="ask_human")
        answer.sender = msg.sender  # in a group, the model reads who answered
        if resume:  # the last question waiting: the run goes on
            await self._resume(session, answer, "answered", row)
        else:
            await resolved(self.d.store, session.id, answer, "answered", row.id)

    async def _resume(self, session: SessionRow, answer: Message, status: str, row: InboxRow) -> None:
        """The question's answer (or its expiry) goes on the history and the run goes on."""
        assert answer.tool_call_id is not None
        history = await self._messages(session.id)
        await self._run_behind(resumed(session), [*history, answer],
                               resolved(self.d.store, session.id, answer, status, row.id))

    async def _peek_messages(self, session: SessionRow | None) -> list[Message]:
        """The session's messages for a decision (who has spoken): as read with the row's view,
        left there for the action that follows."""
        if session is None:
            return []
        known = self._history
        if known is not None and known[0] == session.id:
            return list(known[1])
        return await self.d.store.load_messages(session.id)

    async def _messages(self, session_id: str) -> list[Message]:
        """The session's messages: as read with the view of the row being applied (nothing has
        changed them since), else from the store."""
        known, self._history = self._history, None
        if known is not None and known[0] == session_id:
            return list(known[1])
        return await self.d.store.load_messages(session_id)

    async def _run_behind(self, session: SessionRow, history: list[Message], write: Coroutine[Any, Any, T]) -> T:
        """Start the run while the write that starts it commits. Its first model call needs
        nothing of that commit, and its own writes and its outcome wait for it (the run's journal
        settles it first), so nothing the run does is seen before the write is on disk. The write
        itself begins once the row it finishes is committed, when that row is staged. Should the
        write fail, the run is stopped and the row is tried again."""
        written = asyncio.ensure_future(after(self._row_commit, write))
        self._spawn(session, history, after=written)
        try:
            return await written
        except BaseException:
            await self._cancel_run()
            raise

    async def _stop(self, t: Transition, row: InboxRow, session: SessionRow | None, lang: str, error: str) -> None:
        watch = self._watch
        await self._cancel_run()
        self._drop_steering()
        if t.action is Action.ABANDON:
            assert session is not None
            log.warning("chat %s: its question could not be posted (%s); the run stops", self.skey, error)
            await self._ends.interrupt(session, texts.UNDELIVERABLE_CALL.format(reason=error), close=False, notice=None)
            await self.d.store.finish_inbox(row.id)
            self.d.metrics.runs.labels("undeliverable").inc()
            return
        closing = t.action is Action.CLOSE
        notice = Notice("new" if closing else "cancelled", texts.text("new" if closing else "cancelled", lang))
        partial = watch.text() if session is not None and state_of(session) is ChatState.WORKING else ""
        if t.trigger is Trigger.STOP:
            notice = Notice("cancelled", texts.stopped_text(lang, watch.tool, partial))
        body = notice_body(notice, ends_run=True, lang=lang)
        if session is not None:
            kept = watch.unsaved_results() if state_of(session) is ChatState.WORKING else []
            # what the person saw being written stays in the conversation (marked as cut short)
            after = [Message.assistant(f"{partial} …")] if partial and not closing else []
            result = texts.NEW_TRIP_CALL if closing else texts.CANCELLED_CALL
            await self._ends.interrupt(session, result, close=closing, notice=body, kept=kept, after=after)
            self.d.deliver(self.skey, ())
            if state_of(session) is not ChatState.IDLE:
                self.d.metrics.runs.labels("cancelled").inc()
        else:
            await self._notice("", notice)
        await self.d.store.finish_inbox(row.id, drop_earlier=True)

    async def _reply(self, t: Transition, session: SessionRow | None, lang: str, unknown: str = "") -> Notice:
        if t.action is Action.STALE:
            stale = {Trigger.STOP: "stale_stop", Trigger.ACCEPT: "stale_suggestion", Trigger.DECLINE: "stale_suggestion"}
            return Notice("info", texts.text(stale.get(t.trigger, "stale_answer"), lang))
        if t.action is Action.NOTHING_TO_CANCEL:
            return Notice("info", texts.text("nothing_to_stop" if t.trigger is Trigger.STOP else "nothing_to_cancel", lang))
        if t.action is Action.REFUSE:
            return Notice("info", texts.text("stop_refused", lang))
        if t.trigger is Trigger.HELP:
            return Notice("help", texts.help_text(lang, unknown))
        failed = await self.d.store.failed_outbox(self.skey)
        signoff = await self.d.store.signoff_for_chat(self.skey) if session is not None else None
        line = self._signoffs.desk.status(signoff, lang) if signoff is not None else None
        return Notice("status", await status_text(self.d.store, self.d.settings, session, failed, lang, line))

    # -- the run ----------------------------------------------------------------------------
    def _spawn(
        self, session: SessionRow, history: list[Message] | None = None, after: asyncio.Future[Any] | None = None
    ) -> None:
        if self.run_task is not None:
            raise DoubleRun(f"chat {self.skey} already has a run")
        self._run_session = session
        self.d.logs.bind(self.skey, session)  # the run's task starts with this chat's fields
        self._watch = RunWatch()
        self.run_task = asyncio.create_task(self._run(session, history, after, self._watch), name=f"run:{self.skey}")

    async def _run(
        self, session: SessionRow, history: list[Message] | None, after: asyncio.Future[Any] | None, watch: RunWatch
    ) -> None:
        outcome = await self.d.driver.run(self.key, session, self._steer, history, after=after, watch=watch)
        self._outcomes.append(outcome)
        self._wake.set()  # an outcome, no new row (rows that came during the run woke the chat)

    async def _cancel_run(self) -> None:
        task, self.run_task = self.run_task, None
        self._outcomes.clear()  # a run stopped by the person: what it was about to report is moot
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def _drop_steering(self) -> None:
        self._steer.take()
        if self._handled:  # what the stopped run never read is read again, as the chat now is
            self._handled.clear()
            self.wake()

    async def _apply_outcome(self, outcome: RunOutcome) -> None:
        self.run_task = None
        session = self._run_session
        assert session is not None
        t, queued = await self._ends.write(session, outcome)
        self.d.deliver(self.skey, queued)
        if t.target is not ChatState.ASKING:  # what the run never took is a new turn now
            for inbox_id in self._steer.left():
                self._handled.discard(inbox_id)
                self.wake()
            self._steer.take()
        self._handled.difference_update(getattr(outcome, "inbox_done", ()))

    async def _remind(self, row: InboxRow, session: SessionRow, question: QuestionRow) -> None:
        """One reminder per question: queued as the question's reminder is marked sent, so a
        second `remind` event (or a restart) finds nothing to send."""
        text = texts.text("reminder", session.lang, question=question.question)
        body = notice_body(Notice("reminder", text, reply_to=question.posted_message_id), lang=session.lang)
        row_id = await self.d.store.remind(session.id, question.tool_call_id, body, inbox_id=row.id)
        if row_id is not None:
            self.d.deliver(self.skey, [OutboxRow(row_id, session.id, self.skey, "reminder", body, self.d.clock(),
                                                 tool_call_id=question.tool_call_id)])

    async def _notice(self, session_id: str, notice: Notice) -> None:
        body = notice_body(notice)
        row_id = await self.d.store.queue_outbox(self.skey, session_id, "notice", body)
        self.d.deliver(self.skey, [OutboxRow(row_id, session_id, self.skey, "notice", body, self.d.clock())])


def _for_run_working(msg: IncomingMessage | None, session: SessionRow | None) -> bool:
    """A Stop names no run (a typed /stop: whatever works now) or the run working now; a button
    left on an earlier run's progress message names that run, which has ended."""
    if msg is None or not msg.run:
        return True
    return (state_of(session) is ChatState.WORKING and session is not None
            and msg.run == run_ref(session.id, session.run_no))


def _starts_a_run(t: Transition, trig: RowTrigger) -> bool:
    """Does the row start a run (a turn, or an answer that lets the paused run go on) whose
    first model call may begin while the row commits? Any other transition waits for it."""
    if t.action is Action.START_RUN:
        return True
    return (t.action in (Action.ANSWER, Action.ANSWER_ONE) and t.target is ChatState.WORKING
            and trig.msg is not None and trig.msg.location is None)
