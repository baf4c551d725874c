"""ChatActor: the one task that changes a chat.

It takes the chat's triggers one at a time, in order — the rows of its inbox (messages,
commands, and the events the deadline watcher, the start-up recovery and the delivery worker
write there) and the outcomes of the run it started — loads the chat's state from the store
*after* it has the trigger (it is the only writer, so nothing changes under it), asks
bot.chat_machine.decide what to do, and does it: every state change is one store transaction,
together with its outbox row. It holds only a cache: the run's task, the messages the run is
to see at its next step. When the chat is quiet the actor ends; the store has everything.

With several processes (PostgreSQL) the actor runs under its chat's lease, and its writes carry
the lease's fence (bot.sessions). A write refused with LeaseLost means another process owns the
chat now: the actor ends at once, without retrying and without a word to the chat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from agent_core.memory import Memory
from agent_core.schema import Message
from bot import texts
from bot.addressing import addressee_for, bound_question, refused
from bot.chat import ChatKey, IncomingMessage, Notice
from bot.chat_machine import (
    Action,
    ChatState,
    Facts,
    Transition,
    Trigger,
    decide,
)
from bot.commands import status_text
from bot.delivery import Audience, answer_body, notice_body, question_body
from bot.log_context import ChatLogContext
from bot.metrics import Metrics
from bot.plan_files import file_body, plan_files
from bot.records import history_from_messages, location_to_json
from bot.runs import (
    Crashed,
    Failed,
    Finished,
    Paused,
    RunDriver,
    RunOutcome,
    RunWatch,
    SteerBox,
)
from bot.settings import Settings
from bot.signoff import SignoffDesk, display, is_approver
from bot.store.base import (
    InboxRow,
    LeaseLost,
    OutboxRow,
    QuestionRow,
    SessionRow,
    SignoffRow,
    Store,
    TurnStart,
)
from bot.triggers import RowTrigger, answer_lang, classify, lang_hint
from tools.plan import TripPlan

log = logging.getLogger(__name__)

T = TypeVar("T")
MAX_TRIES = 3  # attempts at one inbox row before it is set aside
RETRY_DELAY_S = 0.3


class DoubleRun(RuntimeError):
    """A second run was about to start in a chat whose run is alive (a bug: never allowed)."""


async def _nobody_known(chat: ChatKey) -> frozenset[str] | None:
    return None


@dataclass(frozen=True, slots=True)
class ActorDeps:
    store: Store
    driver: RunDriver
    settings: Settings
    metrics: Metrics
    deliver: Callable[[str, Sequence[OutboxRow]], None]  # rows were queued for the chat (as stored)
    question_stored: Callable[[float], None]  # a deadline to watch
    logs: ChatLogContext
    clock: Callable[[], float] = time.time
    members: Callable[[ChatKey], Awaitable[frozenset[str] | None]] = _nobody_known


def state_of(session: SessionRow | None) -> ChatState:
    return ChatState.CLOSED if session is None else ChatState(session.state)


def state_with_run(session: SessionRow | None, run_alive: bool) -> str:
    """What /status and the web page call the chat's state: `parked` is asking with nothing held."""
    state = state_of(session)
    if state is ChatState.ASKING and not run_alive:
        return "parked"
    return "idle" if state is ChatState.CLOSED else state.value


class ChatActor:
    def __init__(self, key: ChatKey, deps: ActorDeps, on_quiet: Callable[[ChatActor], None],
                 on_lost: Callable[[ChatActor], None] | None = None) -> None:
        self.key = key
        self.skey = str(key)
        self.d = deps
        self._on_quiet = on_quiet
        self._on_lost = on_lost or on_quiet
        self._wake = asyncio.Event()
        self._outcomes: deque[RunOutcome] = deque()
        self._steer = SteerBox()
        self._handled: set[int] = set()  # rows steering the run (or held for it), still pending in the store
        self._failures: dict[int, int] = {}
        self._run_session: SessionRow | None = None
        self._watch = RunWatch()  # what the current run is doing (a Stop says it and keeps its text)
        self.run_task: asyncio.Task[None] | None = None
        self.task = asyncio.create_task(self._loop(), name=f"chat:{self.skey}")

    @property
    def run_alive(self) -> bool:
        return self.run_task is not None

    def wake(self) -> None:
        self._wake.set()

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
        for row in await self.d.store.inbox_for(self.skey):
            if row.id in self._handled:
                continue
            if self._outcomes:  # the run ended meanwhile: its outcome comes first
                self._wake.set()
                return False
            applied = await self._try_row(row)
            if applied is False:
                return True
        return False

    async def _try_row(self, row: InboxRow) -> bool | None:
        """True: applied (or set aside); False: failed, tried again shortly; None: it waits for
        its question's posting to be recorded."""
        try:
            if not await self._apply_row(row):
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
            await self._notice("", Notice("error", texts.error_text("internal", lang)))
        self._failures.pop(row.id, None)
        return True

    # -- inbox rows -------------------------------------------------------------------------
    async def _apply_row(self, row: InboxRow) -> bool:
        """Apply the row; False when it must wait (see _step)."""
        trig = classify(row)
        session = await self.d.store.get_session(self.skey)
        self.d.logs.bind(self.skey, session)
        state = state_of(session)
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
        facts = Facts(
            answers=bound is not None, idle_run=self.run_task is None,
            current=current is not None or (open_signoff and signoff is not None and named == signoff.id),
            last=question is None or len(waiting) == 1,
            approver=signoff is not None and trig.msg is not None and is_approver(trig.msg, signoff.approvers),
            reason=signoff is not None and signoff.status == "rejecting" and trig.msg is not None
            and trig.msg.user_id == signoff.decided_by,
            asker=trig.msg is not None and (not trig.msg.is_group or trig.msg.user_id == (session.asker_id if session else "")),
        )
        t = decide(state, trig.trigger, facts)
        if t.action in _SIGNOFF_ACTIONS:
            assert session is not None and signoff is not None
            await self._signoff(t, trig, session, signoff)
            return True
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
            self._steer.offer(row.id, Message.user(msg.text.strip()))
            self._handled.add(row.id)
            if not row.noticed:  # stored with the row: no later actor (or process) says it again
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
                await _resolved(store, session.id, answer, "expired", row.id)
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
            await self._notice(session.id if session else "", await self._desk().set_approver(msg, lang))
        elif t.action in (Action.REPLY, Action.NOTHING_TO_CANCEL, Action.STALE, Action.REFUSE):
            await store.finish_inbox(row.id)
            await self._notice(session.id if session else "", await self._reply(t, session, lang))
        else:  # IGNORE
            await store.finish_inbox(row.id)

    async def _signoff(self, t: Transition, trig: RowTrigger, session: SessionRow, signoff: SignoffRow) -> None:
        row, msg, lang, desk = trig.row, trig.msg, session.lang, self._desk()
        queued: list[OutboxRow] = []
        if t.action is Action.APPROVE:  # the approved plan is the final one: its files go with the decision
            assert msg is not None
            plans = [e.plan for e in history_from_messages(await self.d.store.load_messages(session.id)) if e.plan]
            queued = await desk.approve(signoff, msg, row.id, lang, self._files(plans[-1], lang) if plans else ())
        elif t.action is Action.ASK_REASON:
            assert msg is not None
            queued = await desk.ask_reason(signoff, msg, row.id, lang)
        elif t.action is Action.REFUSE_DECISION:
            await self.d.store.finish_inbox(row.id)
            await self._notice(session.id, desk.refusal(signoff, lang))
        elif t.action is Action.REMIND_SIGNOFF:
            queued = await desk.remind(signoff, row.id, lang)
        elif t.action is Action.EXPIRE_SIGNOFF:
            queued = await desk.expire(signoff, row.id, lang)
        else:  # REPLAN: the rejection is stored with the turn that plans again
            assert msg is not None
            who = display(self.key.platform, msg.user_id)
            turn = TurnStart(
                chat_key=self.skey, inbox_id=row.id, lang=session.lang, asker_id=session.asker_id,
                message=Message.user(texts.REJECTED.format(who=who, reason=msg.text.strip())),
                asker_name=session.asker_name, request=session.request, location=None,
                rejected_by=msg.user_id, reason=msg.text.strip()[:500],
            )
            self._spawn(await self.d.store.start_turn(turn))
        self.d.deliver(self.skey, queued)

    async def _present_approvers(self) -> tuple[list[str], list[str]]:
        """The approvers still in the chat, and those who left it (when the surface can tell)."""
        approvers = await self._desk().approvers()
        members = await self.d.members(self.key) if approvers else None
        if members is None:
            return approvers, []
        gone = [a for a in approvers if not a.startswith("@") and a not in members]
        return [a for a in approvers if a not in gone], gone

    def _files(self, plan: TripPlan, lang: str) -> list[tuple[str, str]]:
        """The calendar and the cost sheet of a plan, as outbox rows."""
        return [("file", file_body(f, lang)) for f in plan_files(plan, self.d.settings.timezone)]

    def _desk(self) -> SignoffDesk:
        return SignoffDesk(self.d.store, self.d.settings, self.key, self.d.clock)

    async def _being_posted(self, questions: Sequence[QuestionRow]) -> bool:
        """A question not yet recorded as posted still has its outbox row to deliver (not failed, not sent)."""
        unposted = {q.tool_call_id for q in questions if q.posted_after is None}
        return any(r.kind == "question" and r.tool_call_id in unposted
                   for r in await self.d.store.pending_outbox(self.skey))

    async def _start_turn(self, row: InboxRow, msg: IncomingMessage, session: SessionRow | None) -> None:
        lang = texts.detect_lang(msg.text, session.lang if session else (msg.lang or "zh"))
        new_id = "" if session else uuid.uuid4().hex
        request = msg.text.strip()[:2000]
        trip = self.d.driver.trips.new_trip(self.key, session.id if session else new_id,
                                            session.run_no + 1 if session else 1, request)
        turn = TurnStart(
            chat_key=self.skey, inbox_id=row.id, message=Message.user(msg.text.strip()), lang=lang,
            asker_id=msg.user_id, asker_name=msg.user_name, request=request,
            location=location_to_json(msg.location), new_session_id=new_id, trace_parent=trip,
        )
        fresh = _turn_session(session, turn, self.d.clock())
        # the history is read before the write, which adds the message to it
        history = [] if fresh.run_no == 1 else await self.d.store.load_messages(fresh.id)
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
        if resume:  # the last question waiting: the run goes on
            await self._resume(session, answer, "answered", row)
        else:
            await _resolved(self.d.store, session.id, answer, "answered", row.id)

    async def _resume(self, session: SessionRow, answer: Message, status: str, row: InboxRow) -> None:
        """The question's answer (or its expiry) goes on the history and the run goes on."""
        assert answer.tool_call_id is not None
        history = await self.d.store.load_messages(session.id)
        await self._run_behind(_resumed(session), [*history, answer],
                               _resolved(self.d.store, session.id, answer, status, row.id))

    async def _run_behind(self, session: SessionRow, history: list[Message], write: Awaitable[T]) -> T:
        """Start the run while the write that starts it commits. Its first model call needs
        nothing of that commit, and its own writes and its outcome wait for it (the run's journal
        settles it first), so nothing the run does is seen before the write is on disk. Should
        the write fail, the run is stopped and the row is tried again."""
        written = asyncio.ensure_future(write)
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
            await self._interrupt(session, texts.UNDELIVERABLE_CALL.format(reason=error), close=False, notice=None)
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
            await self._interrupt(session, texts.CANCELLED_CALL, close=closing, notice=body, kept=kept, after=after)
            self.d.deliver(self.skey, ())
            if state_of(session) is not ChatState.IDLE:
                self.d.metrics.runs.labels("cancelled").inc()
        else:
            await self._notice("", notice)
        await self.d.store.finish_inbox(row.id, drop_earlier=True)

    async def _reply(self, t: Transition, session: SessionRow | None, lang: str) -> Notice:
        if t.action is Action.STALE:
            return Notice("info", texts.text("stale_answer", lang))
        if t.action is Action.NOTHING_TO_CANCEL:
            return Notice("info", texts.text("nothing_to_stop" if t.trigger is Trigger.STOP else "nothing_to_cancel", lang))
        if t.action is Action.REFUSE:
            return Notice("info", texts.text("stop_refused", lang))
        if t.trigger is Trigger.HELP:
            return Notice("help", texts.text("help", lang))
        failed = await self.d.store.failed_outbox(self.skey)
        signoff = await self.d.store.signoff_for_chat(self.skey) if session is not None else None
        line = self._desk().status(signoff, lang) if signoff is not None else None
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
        self.wake()

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
        approvers, gone = await self._present_approvers() if _is_team_plan(outcome) else ([], [])
        # A live run's chat is working: every transition out of `working` (cancel, new, stop)
        # stops the run and drops its outcome first, and only this task writes the chat.
        t = decide(ChatState.WORKING, _OUTCOME_TRIGGER[type(outcome)], Facts(idle_run=True, signoff=bool(approvers)))
        store, lang = self.d.store, session.lang
        audience = Audience(lang, session.asker_id, session.asker_name)
        queued: list[OutboxRow] = []
        # the segment's usage is queued beside the outcome's write, so both share one commit
        usage = self.d.driver.save_usage(outcome.usage, self.key.platform)
        if isinstance(outcome, Paused):
            questions = self._questions(session, outcome)
            row_ids, _ = await asyncio.gather(
                store.pause(session.id, outcome.messages, questions, step=outcome.step, inbox_done=outcome.inbox_done),
                usage,
            )
            for row_id, q in zip(row_ids, questions, strict=True):
                body = question_body(q.tool_call_id, q.question, q.options,
                                     Audience(lang, q.asker_id, q.addressee or session.asker_name))
                queued.append(OutboxRow(row_id, session.id, self.skey, "question", body, self.d.clock(),
                                        tool_call_id=q.tool_call_id))
            self.d.question_stored(min(min(q.deadline, q.remind_at or q.deadline) for q in questions))
        elif isinstance(outcome, Finished):
            body = answer_body(outcome.answer, outcome.verdict, audience, outcome.steps)
            outbox = [("answer", body)]
            if gone:  # an approver who left the channel cannot see the request: said, and not asked
                outbox.append(("notice", self._desk().gone(gone, bool(approvers), lang)))
            signoff = self._desk().new(session, approvers) if t.action is Action.STORE_FOR_SIGNOFF else None
            if _is_team_plan(outcome) and signoff is None:  # a team's final plan comes with its files
                assert outcome.answer.plan is not None
                outbox += self._files(outcome.answer.plan, lang)
            if signoff is not None:  # the plan, then the request with the approvers' buttons
                outbox.append(("notice", self._desk().request(signoff, lang)))
            row_ids, _ = await asyncio.gather(
                store.finish_run(session.id, outcome.messages, outbox=outbox, inbox_done=outcome.inbox_done,
                                 signoff=signoff),
                usage,
            )
            if signoff is not None:  # its reminder and deadline are watched like a question's
                self.d.question_stored(min(signoff.remind_at, signoff.deadline))
            queued = [OutboxRow(i, session.id, self.skey, kind, b, self.d.clock())
                      for i, (kind, b) in zip(row_ids, outbox, strict=True)]
            self.d.metrics.runs.labels("answered").inc()
        elif isinstance(outcome, Failed):
            notice = Notice("error", texts.error_text(outcome.failure.reason, lang))
            body = notice_body(notice, ends_run=True, lang=lang, reason=outcome.failure.reason)
            await asyncio.gather(
                store.finish_run(session.id, outcome.messages, outbox=[("notice", body)], inbox_done=outcome.inbox_done),
                usage,
            )
            self.d.metrics.runs.labels(outcome.failure.reason).inc()
        else:
            notice = Notice("error", texts.error_text("internal", lang))
            await asyncio.gather(
                self._interrupt(session, f"Error: internal failure ({outcome.error})", close=False,
                                notice=notice_body(notice, ends_run=True, lang=lang, reason="internal")),
                usage,
            )
            self.d.metrics.runs.labels("internal").inc()
        self.d.deliver(self.skey, queued)
        if t.target is not ChatState.ASKING:  # what the run never took is a new turn now
            for inbox_id in self._steer.left():
                self._handled.discard(inbox_id)
                self.wake()
            self._steer.take()
        self._handled.difference_update(getattr(outcome, "inbox_done", ()))

    def _questions(self, session: SessionRow, paused: Paused) -> list[QuestionRow]:
        now = self.d.clock()
        timeout, remind = self.d.settings.human_timeout_s, self.d.settings.remind_after_s
        questions = []
        for ask in paused.asks:
            may_answer, addressee = addressee_for(ask.to, session.request, session.asker_id)
            questions.append(QuestionRow(
                session.id, ask.tool_call_id, ask.question, ask.options, may_answer, now, now + timeout, None,
                "waiting", remind_at=now + remind if 0 < remind < timeout else None, addressee=addressee,
            ))
        return questions

    async def _remind(self, row: InboxRow, session: SessionRow, question: QuestionRow) -> None:
        """One reminder per question: queued as the question's reminder is marked sent, so a
        second `remind` event (or a restart) finds nothing to send."""
        text = texts.text("reminder", session.lang, question=question.question)
        body = notice_body(Notice("reminder", text, reply_to=question.posted_message_id), lang=session.lang)
        row_id = await self.d.store.remind(session.id, question.tool_call_id, body, inbox_id=row.id)
        if row_id is not None:
            self.d.deliver(self.skey, [OutboxRow(row_id, session.id, self.skey, "reminder", body, self.d.clock(),
                                                 tool_call_id=question.tool_call_id)])

    async def _interrupt(self, session: SessionRow, result: str, *, close: bool, notice: str | None,
                         kept: Sequence[Message] = (), after: Sequence[Message] = ()) -> None:
        """End the session's run: every call still open gets its result where the run made one
        (`kept`, not yet stored) and `result` otherwise, so the history stays valid for the API;
        `after` follows them; its question (if any) is cancelled — with its notice, in one write."""
        open_calls = Memory(await self.d.store.load_messages(session.id)).unanswered_calls()
        made = {m.tool_call_id: m for m in kept}
        fillers = [made.get(tc.id) or Message.tool(result, tool_call_id=tc.id, name=tc.function.name)
                   for tc in open_calls]
        await self.d.store.interrupt(session.id, [*fillers, *after], close=close, notice=notice)

    async def _notice(self, session_id: str, notice: Notice) -> None:
        body = notice_body(notice)
        row_id = await self.d.store.queue_outbox(self.skey, session_id, "notice", body)
        self.d.deliver(self.skey, [OutboxRow(row_id, session_id, self.skey, "notice", body, self.d.clock())])


_SIGNOFF_ACTIONS = frozenset({Action.APPROVE, Action.ASK_REASON, Action.REPLAN, Action.REFUSE_DECISION,
                              Action.REMIND_SIGNOFF, Action.EXPIRE_SIGNOFF})


def _is_team_plan(outcome: RunOutcome) -> bool:
    return isinstance(outcome, Finished) and outcome.answer.plan is not None and bool(outcome.answer.plan.party)


_OUTCOME_TRIGGER: dict[type, Trigger] = {
    Paused: Trigger.PAUSED, Finished: Trigger.FINISHED, Failed: Trigger.FAILED, Crashed: Trigger.CRASHED,
}


class QuestionGone(RuntimeError):
    """The question the chat task was answering was no longer waiting (a bug: it is the only writer)."""


async def _resolved(store: Store, session_id: str, answer: Message, status: str, inbox_id: int) -> None:
    assert answer.tool_call_id is not None
    if not await store.resolve_question(session_id, answer.tool_call_id, answer, status=status, inbox_id=inbox_id):
        raise QuestionGone(f"question {answer.tool_call_id} of session {session_id} is not waiting")


def _turn_session(old: SessionRow | None, turn: TurnStart, now: float) -> SessionRow:
    """The session as Store.start_turn writes it, known before the write commits."""
    if old is None:
        return SessionRow(turn.new_session_id, turn.chat_key, ChatState.WORKING.value, turn.lang, turn.asker_id,
                          turn.asker_name, 1, 0, turn.request, turn.location, now, now, now,
                          trace_parent=turn.trace_parent)
    return replace(
        old, state=ChatState.WORKING.value, lang=turn.lang, asker_id=turn.asker_id, asker_name=turn.asker_name,
        run_no=old.run_no + 1, run_steps=0, request=turn.request, location=turn.location or old.location,
        updated_at=now, run_started_at=now, trace_parent=turn.trace_parent,
    )


def _resumed(session: SessionRow) -> SessionRow:
    """The session as resolve_question left it: the answer's write changed only its state."""
    return replace(session, state=ChatState.WORKING.value)

