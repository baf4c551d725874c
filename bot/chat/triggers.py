"""What an inbox row is to the chat's machine: its trigger, the message it carries, the event's
data, and the language to answer in (bot.chat.actor applies it)."""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass

from bot import texts
from bot.chat.commands import UNKNOWN, command_of, command_word
from bot.chat.machine import Trigger
from bot.run.records import message_from_json
from bot.store.base import InboxRow, SessionRow
from bot.surface import IncomingMessage, MessageKind

COMMANDS = {"help": Trigger.HELP, "status": Trigger.STATUS, "cancel": Trigger.CANCEL, "new": Trigger.NEW,
            "stop": Trigger.STOP, "trip": Trigger.TRIP, UNKNOWN: Trigger.HELP}
DECISIONS = {"approve": Trigger.APPROVE, "reject": Trigger.REJECT, "accept": Trigger.ACCEPT, "decline": Trigger.DECLINE}


@dataclass(slots=True)
class RowTrigger:
    row: InboxRow
    trigger: Trigger
    msg: IncomingMessage | None
    data: dict[str, str]


def classify(row: InboxRow) -> RowTrigger:
    if row.kind != "message":
        return RowTrigger(row, Trigger(row.kind), None, json.loads(row.body or "{}"))
    msg = message_from_json(row.body)
    command = command_of(msg.text) if msg.kind is MessageKind.TEXT else None
    if command == UNKNOWN:  # "/foo": the help, said to be the answer to a command nobody has
        return RowTrigger(row, Trigger.HELP, msg, {"unknown": command_word(msg.text)})
    if command is not None:
        return RowTrigger(row, COMMANDS[command], msg, {})
    if msg.kind is MessageKind.DECISION:
        return RowTrigger(row, DECISIONS[msg.text], msg, {})
    if msg.kind is MessageKind.BUTTON or msg.question_id is not None:
        return RowTrigger(row, Trigger.NAMED_ANSWER, msg, {})
    if msg.kind is MessageKind.LOCATION and not msg.text.strip():
        return RowTrigger(row, Trigger.LOCATION, msg, {})
    return RowTrigger(row, Trigger.MESSAGE, msg, {})


def answer_lang(session: SessionRow | None, trig: RowTrigger) -> str:
    """The conversation's language; a command says nothing of it, so a new chat takes the hint."""
    if session is not None:
        return session.lang
    hint = (trig.msg.lang if trig.msg else "") or "zh"
    if trig.msg is None or trig.trigger in COMMANDS.values():
        return hint
    return texts.detect_lang(trig.msg.text, hint)


def lang_hint(body: str) -> str:
    with contextlib.suppress(ValueError, KeyError, TypeError):
        msg = message_from_json(body)
        return texts.detect_lang(msg.text, msg.lang or "zh")
    return ""
