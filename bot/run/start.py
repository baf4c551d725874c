"""The writes that start or resume a run, and the session as they leave it.

The chat's actor (bot.chat.actor) starts a run while the write that starts it commits (its first
model call needs nothing of that commit; its own writes wait for it). So the session the run
works with is computed here, before the write, exactly as the store will have written it.
"""

from __future__ import annotations

from dataclasses import replace

from agent_core.schema import Message
from bot.chat.machine import ChatState
from bot.store.base import SessionRow, Store, TurnStart


class QuestionGone(RuntimeError):
    """The question the chat task was answering was no longer waiting (a bug: it is the only writer)."""


async def resolved(store: Store, session_id: str, answer: Message, status: str, inbox_id: int) -> None:
    """Store the question's answer (or expiry) as its tool result, with its inbox row done."""
    assert answer.tool_call_id is not None
    if not await store.resolve_question(session_id, answer.tool_call_id, answer, status=status, inbox_id=inbox_id):
        raise QuestionGone(f"question {answer.tool_call_id} of session {session_id} is not waiting")


def turn_session(old: SessionRow | None, turn: TurnStart, now: float) -> SessionRow:
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


def resumed(session: SessionRow) -> SessionRow:
    """The session as resolve_question left it: the answer's write changed only its state."""
    return replace(session, state=ChatState.WORKING.value)
