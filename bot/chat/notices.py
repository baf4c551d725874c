"""What a chat's actor says back without a run: replies to commands, the word that a message is
held or steers the run, a question's reminder, any notice. Each is queued in the chat's outbox
(in the write that changes the chat, where there is one) and handed to the delivery worker.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot import texts
from bot.chat.actor_deps import ActorDeps
from bot.chat.addressing import refused
from bot.chat.commands import status_text
from bot.chat.machine import Action, Transition, Trigger
from bot.delivery.bodies import notice_body
from bot.store.base import InboxRow, OutboxRow, QuestionRow, SessionRow
from bot.surface import ChatKey, IncomingMessage, Notice
from bot.team.signoff import SignoffDesk


class ChatNotices:
    def __init__(self, deps: ActorDeps, key: ChatKey, desk: SignoffDesk) -> None:
        self.d = deps
        self.skey = str(key)
        self.desk = desk

    async def say(self, session_id: str, notice: Notice) -> None:
        body = notice_body(notice)
        row_id = await self.d.store.queue_outbox(self.skey, session_id, "notice", body)
        self.d.deliver(self.skey, [OutboxRow(row_id, session_id, self.skey, "notice", body, self.d.clock())])

    async def held(self, t: Transition, row: InboxRow, msg: IncomingMessage, session: SessionRow | None,
                   waiting: Sequence[QuestionRow], lang: str) -> None:
        """A message kept for the run (steering it, or held for its question): said once, and
        marked so in the same write (no later actor, or process, says it again)."""
        if row.noticed or msg.adopted_by:  # an accepted suggestion was said to be taken with the Yes
            return
        if t.action is Action.HOLD and (other := refused(msg, waiting)) is not None:
            notice = Notice("refused", texts.text("not_yours", lang, who=other.addressee))
        else:
            notice = Notice("queued", texts.text("steered" if t.action is Action.STEER else "held", lang))
        body = notice_body(notice)
        session_id = session.id if session else ""
        out_id = await self.d.store.notice_inbox(row.id, self.skey, session_id, body)
        self.d.deliver(self.skey, [OutboxRow(out_id, session_id, self.skey, "notice", body, self.d.clock())])

    async def reply(self, t: Transition, session: SessionRow | None, lang: str, unknown: str = "") -> Notice:
        """The answer to a command that changes nothing (/help, /status), or why nothing changed;
        `unknown`: a command nobody has, answered with the help."""
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
        line = self.desk.status(signoff, lang) if signoff is not None else None
        return Notice("status", await status_text(self.d.store, self.d.settings, session, failed, lang, line))

    async def remind(self, row: InboxRow, session: SessionRow, question: QuestionRow) -> None:
        """One reminder per question: queued as the question's reminder is marked sent, so a
        second `remind` event (or a restart) finds nothing to send."""
        text = texts.text("reminder", session.lang, question=question.question)
        body = notice_body(Notice("reminder", text, reply_to=question.posted_message_id), lang=session.lang)
        row_id = await self.d.store.remind(session.id, question.tool_call_id, body, inbox_id=row.id)
        if row_id is not None:
            self.d.deliver(self.skey, [OutboxRow(row_id, session.id, self.skey, "reminder", body, self.d.clock(),
                                                 tool_call_id=question.tool_call_id)])
