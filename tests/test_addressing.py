"""Which waiting question a message answers (bot.chat.addressing), with several waiting at once."""

from __future__ import annotations

from bot.chat.addressing import addressee_for, bound_question, refused
from bot.store.base import InboxRow, QuestionRow
from bot.surface import ChatKey, IncomingMessage, MessageKind

CHAT = ChatKey("telegram", "-100", "")
REQUEST = "offsite in Hangzhou for <@U0ANA> (Beijing), @bo (Shanghai) and Chen (Shenzhen)"


def q(call_id: str, asker_id: str, addressee: str, posted: str, after: int = 10) -> QuestionRow:
    return QuestionRow("s1", call_id, f"question {call_id}", (), asker_id, 0.0, 1.0, posted, "waiting", after, addressee=addressee)


def msg(user: str, text: str = "x", *, handle: str = "", reply_to: str | None = None, group: bool = True,
        kind: MessageKind = MessageKind.TEXT) -> IncomingMessage:
    return IncomingMessage(CHAT, user, text, handle=handle, reply_to=reply_to, is_group=group, kind=kind)


def row(inbox_id: int) -> InboxRow:
    return InboxRow(inbox_id, "telegram", str(inbox_id), str(CHAT), "{}", 0.0)


WAITING = [q("ana", "U0ANA", "<@U0ANA>", "m1"), q("bo", "", "@bo", "m2"), q("chen", "LEAD", "Chen", "m3")]


def test_to_becomes_who_may_answer() -> None:
    assert addressee_for("<@U0ANA>", REQUEST, "LEAD") == ("U0ANA", "<@U0ANA>")
    assert addressee_for("bo", REQUEST, "LEAD") == ("", "@bo")  # matched by @username later
    assert addressee_for("Chen", REQUEST, "LEAD") == ("LEAD", "Chen")  # the requester speaks for a plain name
    assert addressee_for("", REQUEST, "LEAD") == ("LEAD", "")


def test_each_question_is_answered_by_its_traveller_only() -> None:
    assert bound_question(row(11), msg("U0ANA"), WAITING, None) is WAITING[0]
    assert bound_question(row(11), msg("777", handle="@Bo"), WAITING, None) is WAITING[1]
    assert bound_question(row(11), msg("LEAD"), WAITING, None) is WAITING[2]
    assert bound_question(row(11), msg("U0DAN", reply_to="m1"), WAITING, None) is None  # a reply, not theirs
    assert refused(msg("U0DAN", reply_to="m1"), WAITING) is WAITING[0]
    # in a Slack thread (not a "group") only the addressee answers an addressed question too
    assert bound_question(row(11), msg("U0DAN", group=False), WAITING, None) is WAITING[2]
    assert bound_question(row(11), msg("U0DAN", group=False), WAITING[:2], None) is None


def test_nothing_sent_before_a_question_was_posted_answers_it() -> None:
    assert bound_question(row(9), msg("U0ANA"), WAITING, None) is None
    assert bound_question(row(9), msg("U0ANA", reply_to="m1"), WAITING, None) is None
    named = IncomingMessage(CHAT, "web", "ok", question_id="bo")  # a web answer names its question
    assert bound_question(row(9), named, WAITING, None) is WAITING[1]
    button = msg("777", handle="@bo", reply_to="m2", kind=MessageKind.BUTTON)
    assert bound_question(row(9), button, WAITING, None) is WAITING[1]
    assert bound_question(row(9), msg("U0ANA", reply_to="m2", kind=MessageKind.BUTTON), WAITING, None) is None
