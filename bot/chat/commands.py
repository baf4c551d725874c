"""The chat commands every surface shares (/start and /help, /new, /cancel, /stop, /status) and what
/status says. What each command does to the chat is a transition of bot.chat.machine."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_core.lang import plural
from bot import texts
from bot.settings import Settings
from bot.store.base import OutboxRow, SessionRow, Store

COMMANDS = {"/start": "help", "/help": "help", "/new": "new", "/cancel": "cancel", "/status": "status", "/stop": "stop",
            "/trip": "trip"}


UNKNOWN = "unknown"
# what reads as a command: a slash and a word (Telegram's /cmd@botname too); "/home/x" or "/ 北京" does not
_COMMAND_WORD = re.compile(r"^/[A-Za-z][A-Za-z0-9_]*(@\S+)?$")


def command_word(text: str) -> str:
    """The command as typed, without Telegram's @botname: "/foo" of "/foo@trip_bot bar"."""
    word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return word.split("@", 1)[0]


def command_of(text: str) -> str | None:
    """The command a message is (UNKNOWN for a command nobody has: it gets the help, and is never
    taken as a trip request); None for a message that is no command."""
    first = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    if not _COMMAND_WORD.match(first):
        return None
    return COMMANDS.get(command_word(text).lower(), UNKNOWN)


async def status_text(
    store: Store, settings: Settings, session: SessionRow | None, failed: Sequence[OutboxRow], lang: str,
    signoff: str | None = None,
) -> str:
    """`signoff`: the line about the conversation's last sign-off (waiting, or who decided what, when)."""
    if session is not None and session.state == "signoff" and signoff:
        text = signoff
    elif session is None or session.state == "idle":
        text = texts.text("status_idle", lang)
    elif session.state == "asking":
        waiting = await store.questions_for_chat(session.chat_key)
        if len(waiting) > 1:  # a team trip: one question per person
            lines = "\n".join(f"- {q.addressee or '?'}: {q.question}" for q in waiting)
            text = texts.text("status_waiting_many", lang, questions=lines)
        else:
            text = texts.text("status_waiting", lang, question=waiting[0].question if waiting else "?")
    else:
        text = texts.text("status_running", lang, step=session.run_steps, max=settings.max_steps)
    if signoff and session is not None and session.state != "signoff":
        text += "\n" + signoff
    if session is not None and session.llm_calls:
        text += "\n" + texts.text(
            "status_usage", lang, calls=session.llm_calls, prompt=session.prompt_tokens,
            completion=session.completion_tokens, cost=f"{session.cost_usd:.4f}",
        )
    if failed:
        text += "\n" + texts.text("status_failed", lang, messages=plural(len(failed), "message", lang),
                                   reason=failed[-1].error or "?")
    return text
