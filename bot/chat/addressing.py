"""Who may answer which question: the binding of a message to one of the questions waiting.

A question may be addressed to one traveller of a team trip (ask_human's `to`); several can wait
in one chat at once, one per person. A message answers a question only if it arrived after the
question was posted (the inbox watermark) and its sender may answer it:

- a question for a traveller known by platform id (a Slack mention) or @username (Telegram):
  that person only, in a plain message or a reply to it; anyone else is refused (their message
  steers the run instead);
- a question for a traveller known only by a plain name, or for nobody in particular: in a
  group or team thread, the person who asked for the trip (they speak for the party), in a
  plain message, a reply or a button press; anyone else's answer would change the trip, so it
  is kept as a suggestion instead (bot.chat.rights). In a private chat, its one person.

A suggestion the requester accepted (`adopted_by`) is a change to the trip, never an answer.

A message that could answer several takes the one asked first; a reply names its question.
Buttons and the web's answers name their question outright.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_core.party import Traveller, read_party
from bot.store.base import InboxRow, QuestionRow, SessionRow
from bot.surface import IncomingMessage, MessageKind


def addressee_for(to: str, request: str, asker_id: str) -> tuple[str, str]:
    """(who may answer: a platform id or "", how the question names them) for ask_human's `to`."""
    want = to.strip()
    if not want:
        return asker_id, ""
    party = read_party(request)
    traveller = next((t for t in party if t.named_by(want)), None) or _as_named(want)
    if traveller.user_id:
        return traveller.user_id, traveller.label
    if traveller.handle:
        return "", traveller.label  # matched by @username; the platform id is not known
    return asker_id, traveller.label  # a plain name: whoever asked for the trip speaks for them


def bound_question(
    row: InboxRow, msg: IncomingMessage, questions: Sequence[QuestionRow], session: SessionRow | None
) -> QuestionRow | None:
    """The waiting question this message answers, if any."""
    if msg.adopted_by:
        return None
    if msg.question_id is not None:  # named, and nobody can name a question not yet in the chat
        return next((q for q in questions if q.tool_call_id == msg.question_id and q.posted_after is not None), None)
    if msg.kind is MessageKind.BUTTON:  # a button belongs to the message that carried it
        pressed = next((q for q in questions if q.posted_message_id is not None
                        and q.posted_message_id == msg.reply_to), None)
        return pressed if pressed is not None and _may_answer(msg, pressed, session) else None
    # sent after the question reached the chat: before, nobody had seen it
    seen = [q for q in questions if q.posted_after is not None and row.id > q.posted_after]
    replied = next((q for q in seen if msg.reply_to is not None and q.posted_message_id == msg.reply_to), None)
    if replied is not None:
        return replied if _may_answer(msg, replied, session) else None
    return next((q for q in seen if _may_answer(msg, q, session)), None)


def answers(row: InboxRow, msg: IncomingMessage, question: QuestionRow, session: SessionRow | None) -> bool:
    """Does this message answer `question` (one of the questions waiting)?"""
    return bound_question(row, msg, [question], session) is question


def refused(msg: IncomingMessage, questions: Sequence[QuestionRow]) -> QuestionRow | None:
    """The question a message that answers none was most likely meant for, when that question is
    for somebody else (a reply to it, or any message while addressed questions wait): the sender
    is told who it is for, and their message steers the run or is kept as a suggestion instead."""
    if msg.reply_to is not None:
        q = next((q for q in questions if q.posted_message_id == msg.reply_to), None)
        if q is not None:
            return q if _strict(q) or (msg.is_group and msg.user_id != q.asker_id) else None
    return next((q for q in questions if _strict(q) and q.posted_after is not None), None)


def is_for(msg: IncomingMessage, q: QuestionRow) -> bool:
    """Is the sender of `msg` the one person `q` is addressed to?"""
    return _strict(q) and _is_addressee(msg, q)


def _may_answer(msg: IncomingMessage, q: QuestionRow, session: SessionRow | None) -> bool:
    if _strict(q):
        return _is_addressee(msg, q)
    return not msg.is_group or msg.user_id == (q.asker_id or (session.asker_id if session else ""))


def _strict(q: QuestionRow) -> bool:
    """Addressed to a traveller the platform can tell apart (a Slack id or a @username): only
    they answer, in a DM-like thread as in a group."""
    return bool(q.addressee) and (q.asker_id == "" or q.addressee.startswith("<@"))


def _is_addressee(msg: IncomingMessage, q: QuestionRow) -> bool:
    if q.asker_id and msg.user_id == q.asker_id:
        return True
    return bool(msg.handle) and msg.handle.lower() == q.addressee.lower()


def _as_named(to: str) -> Traveller:
    party = read_party(to)
    return party[0] if party else Traveller(to, None)
