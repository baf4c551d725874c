"""The writes that resume a run, and the session as they leave it.

The chat's actor (bot.chat.actor) stores a question's answer (or its expiry) as the question's
tool result, then runs the agent on the session as that write left it.
"""

from __future__ import annotations

from dataclasses import replace

from agent_core.schema import Message
from bot.chat.machine import ChatState
from bot.store.base import SessionRow, Store


class QuestionGone(RuntimeError):
    """The question the chat task was answering was no longer waiting (a bug: it is the only writer)."""


async def resolved(store: Store, session_id: str, answer: Message, status: str, inbox_id: int) -> None:
    """Store the question's answer (or expiry) as its tool result, with its inbox row done."""
    assert answer.tool_call_id is not None
    if not await store.resolve_question(session_id, answer.tool_call_id, answer, status=status, inbox_id=inbox_id):
        raise QuestionGone(f"question {answer.tool_call_id} of session {session_id} is not waiting")


def resumed(session: SessionRow) -> SessionRow:
    """The session as resolve_question left it: the answer's write changed only its state."""
    return replace(session, state=ChatState.WORKING.value)
