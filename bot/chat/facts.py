"""What the chat's machine needs to know about one inbox row: read from the store when the chat's
actor takes the row (bot.chat.actor), after it has the row and before it decides.

`read_facts` gives the row's trigger (bot.chat.triggers), the chat's session and state, the
questions waiting, the sign-off, and the named facts of bot.chat.machine's guards. The actor is
the only writer of its chat, so nothing read here changes before the row is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_core.schema import Message
from bot.chat.actor_deps import state_of
from bot.chat.addressing import bound_question
from bot.chat.machine import ChatState, Facts, Trigger
from bot.chat.suggestion_steps import Said, SuggestionSteps
from bot.chat.triggers import RowTrigger, classify
from bot.store.base import ChatView, InboxRow, QuestionRow, SessionRow, SignoffRow, Store
from bot.surface import IncomingMessage, run_ref
from bot.team.signoff import is_approver


@dataclass(frozen=True, slots=True)
class RowFacts:
    trig: RowTrigger
    session: SessionRow | None
    state: ChatState
    waiting: list[QuestionRow]  # the questions waiting in the chat, in the order they were asked
    question: QuestionRow | None  # the one the row answers, or the event is about
    signoff: SignoffRow | None  # the chat's sign-off, while it waits for one
    facts: Facts
    history: list[Message] | None  # the session's messages when read with the row (else None)
    said: Said  # who said it, and what they may change (bot.chat.suggestion_steps)


async def read_facts(store: Store, chat_key: str, row: InboxRow, view: ChatView | None, run_alive: bool,
                     suggestions: SuggestionSteps, signable: bool) -> RowFacts | None:
    """The facts for `row`; `view`: the chat as read with it, while nothing has changed it since
    (None: read each part now); `signable`: the chat's surface can carry a sign-off. None when the row must wait: a message that may answer a question
    whose posting is not recorded yet (commands and events after it do not wait); the delivery
    worker wakes the chat once it is recorded (SessionManager, on_posted)."""
    trig = classify(row)
    session = view.session if view is not None else await store.get_session(chat_key)
    state = state_of(session)
    if view is not None:
        waiting = view.questions
    else:
        waiting = await store.questions_for_chat(chat_key) if state is ChatState.ASKING else []
    if trig.trigger is Trigger.MESSAGE and any(q.posted_after is None for q in waiting):
        if await _being_posted(store, chat_key, waiting):
            # Whether this message came after the question (and answers it) is known once the
            # posting is recorded with its watermark. Deciding now would hold back an answer
            # another process stored before this one recorded the posting.
            return None
        # The posting may have been recorded between the two reads (the outbox row is sent,
        # the questions were read before): read them again, or an answer given after the
        # question appeared is taken for a message sent before it, and the chat waits for
        # an answer it already has (1 of 150 conversations in bench_pg_cluster.py).
        waiting = await store.questions_for_chat(chat_key)
    msg = trig.msg
    bound = bound_question(row, msg, waiting, session) if msg is not None else None
    current = next((q for q in waiting if q.tool_call_id == trig.data.get("tool_call_id")
                    and q.session_id == trig.data.get("session_id")), None)
    signoff = await store.signoff_for_chat(chat_key) if state is ChatState.SIGNOFF else None
    named = msg.question_id if msg is not None else trig.data.get("signoff_id")
    open_signoff = signoff is not None and signoff.open
    history = view.history if view is not None and view.session is not None else None

    async def messages() -> list[Message]:  # who has spoken: read only when needed
        if session is None:
            return []
        return list(history) if history is not None else await store.load_messages(session.id)

    said = await suggestions.read(trig, session, signoff, messages)
    facts = Facts(
        answers=bound is not None, idle_run=not run_alive,
        current=current is not None or (open_signoff and signoff is not None and named == signoff.id)
        or (trig.trigger is Trigger.STOP and _for_run_working(msg, session)) or said.current,
        last=(bound or current) is None or len(waiting) == 1,
        approver=signoff is not None and msg is not None and is_approver(msg, signoff.approvers),
        reason=signoff is not None and signoff.status == "rejecting" and msg is not None
        and msg.user_id == signoff.decided_by,
        asker=msg is not None and (not msg.is_group or msg.user_id == (session.asker_id if session else "")),
        entitled=said.entitled, signable=signable,
    )
    return RowFacts(trig, session, state, waiting, bound or current, signoff, facts, history, said)


async def _being_posted(store: Store, chat_key: str, questions: Sequence[QuestionRow]) -> bool:
    """A question not yet recorded as posted still has its outbox row to deliver (not failed, not sent)."""
    unposted = {q.tool_call_id for q in questions if q.posted_after is None}
    return any(r.kind == "question" and r.tool_call_id in unposted for r in await store.pending_outbox(chat_key))


def _for_run_working(msg: IncomingMessage | None, session: SessionRow | None) -> bool:
    """A Stop names no run (a typed /stop: whatever works now) or the run working now; a button
    left on an earlier run's progress message names that run, which has ended."""
    if msg is None or not msg.run:
        return True
    return (state_of(session) is ChatState.WORKING and session is not None
            and msg.run == run_ref(session.id, session.run_no))
