"""Which chat a log line is about: chat key, session id, run number and trace id, set by the
chat's own task (bot.chat.actor) and inherited by the tasks it starts (its run), read by the JSON
log formatter (bot.observe.json_logs).

The context variable belongs to an object the runtime makes and passes down, not to this
module, so two runtimes in one process (the tests) never see each other's chats.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

from bot.observe.trip_trace import trace_id_of
from bot.store.base import SessionRow


@dataclass(frozen=True, slots=True)
class ChatFields:
    chat_key: str
    session_id: str = ""
    run_no: int = 0
    trace_id: str = ""  # the trip's trace (32 hex digits), '' when tracing is off


class ChatLogContext:
    def __init__(self) -> None:
        self._var: contextvars.ContextVar[ChatFields | None] = contextvars.ContextVar(
            f"chat-log-{id(self)}", default=None)

    def bind(self, chat_key: str, session: SessionRow | None = None) -> None:
        """From now on in this task (and in tasks it creates after this), lines are about this
        chat (and session)."""
        if session is None:
            self._var.set(ChatFields(chat_key))
        else:
            self._var.set(ChatFields(chat_key, session.id, session.run_no, trace_id_of(session.trace_parent)))

    def current(self) -> ChatFields | None:
        return self._var.get()
