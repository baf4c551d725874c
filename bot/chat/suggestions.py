"""Suggestions: a message from someone who may not make the change it asks for, kept until the
person who may make it decides.

The chat machine (bot.chat.machine) decides *whether* (its `entitled` fact, bot.chat.rights);
this desk does the store writes and the words of each action, and returns the outbox rows to
deliver:

- SUGGEST: the message is stored as a suggestion (its inbox row closes in the same transaction,
  so nothing of it is lost and nothing of it reaches the run), and one notice says what happened
  to it and asks the requester: "Bo suggests Guangzhou instead of Hangzhou. Ana, change it?"
  with Yes / No buttons naming the suggestion.
- ADOPT (Yes): the suggestion's words go to the chat's inbox as a message the requester made
  (`adopted_by`), in the transaction that records the Yes; the chat applies it next like any of
  the requester's messages (a new turn, steering the run, held for a question).
- DECLINE (No): recorded and said; nothing changes.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

from bot import texts
from bot.chat.reach import change_of
from bot.chat.rights import Rights, Standing
from bot.delivery.bodies import notice_body
from bot.run.records import message_from_json, message_to_json
from bot.store.base import (
    ChatEvent,
    InboxRow,
    OutboxRow,
    QuestionRow,
    SessionRow,
    Store,
    SuggestionRow,
)
from bot.surface import ChatKey, IncomingMessage, Notice, mention, quoted

WORDS_SHOWN = 300  # of a suggestion's words, quoted back in the question to the requester


@dataclass(frozen=True, slots=True)
class SuggestionDesk:
    store: Store
    chat: ChatKey
    clock: Callable[[], float]

    async def keep(self, row: InboxRow, msg: IncomingMessage, session: SessionRow, rights: Rights, lang: str,
                   not_theirs: QuestionRow | None = None) -> list[OutboxRow]:
        """Store the message as a suggestion and ask the requester; `not_theirs`: the question the
        message tried to answer, which is for someone else."""
        suggestion = SuggestionRow(uuid.uuid4().hex, session.id, str(self.chat), "waiting", message_to_json(msg),
                                   msg.user_id, session.asker_id, self.clock())
        text = "\n".join([*self._why(msg, session, rights, lang, not_theirs), self._ask(msg, session, lang)])
        body = notice_body(Notice("suggestion", text, suggestion_id=suggestion.id), lang=lang)
        [out_id] = await self.store.add_suggestion(suggestion, inbox_id=row.id, outbox=[("notice", body)])
        return [OutboxRow(out_id, session.id, str(self.chat), "notice", body, self.clock())]

    async def adopt(self, suggestion: SuggestionRow, press: IncomingMessage, row: InboxRow,
                    lang: str) -> list[OutboxRow] | None:
        """Yes: the suggestion becomes the presser's change (a message in the chat's inbox)."""
        said = message_from_json(suggestion.body)
        adopted = replace(said, adopted_by=press.user_id, dedup_id=f"adopted:{suggestion.id}", received_at=self.clock())
        event = ChatEvent(str(self.chat), "message", message_to_json(adopted), adopted.dedup_id)
        text = texts.text("suggestion_accepted", lang, asker=self._person(press), who=self._person(said))
        return await self._decide(suggestion, "accepted", press, row, text, event)

    async def decline(self, suggestion: SuggestionRow, press: IncomingMessage, row: InboxRow,
                      lang: str) -> list[OutboxRow] | None:
        said = message_from_json(suggestion.body)
        text = texts.text("suggestion_declined", lang, asker=self._person(press), who=self._person(said))
        return await self._decide(suggestion, "declined", press, row, text, None)

    def refusal(self, suggestion: SuggestionRow, session: SessionRow | None, lang: str) -> Notice:
        said = message_from_json(suggestion.body)
        asker = mention(self.chat.platform, suggestion.asked_of, session.asker_name if session else "")
        return Notice("info", texts.text("suggestion_refused", lang, asker=asker, who=self._person(said)))

    async def _decide(self, suggestion: SuggestionRow, status: str, press: IncomingMessage, row: InboxRow,
                      text: str, adopted: ChatEvent | None) -> list[OutboxRow] | None:
        body = notice_body(Notice("info", text))
        ids = await self.store.decide_suggestion(suggestion.id, status, press.user_id, inbox_id=row.id,
                                                 adopted=adopted, outbox=[("notice", body)])
        if ids is None:
            return None
        return [OutboxRow(i, suggestion.session_id, str(self.chat), "notice", body, self.clock()) for i in ids]

    def _why(self, msg: IncomingMessage, session: SessionRow, rights: Rights, lang: str,
             not_theirs: QuestionRow | None) -> list[str]:
        who, asker = self._person(msg), mention(self.chat.platform, session.asker_id, session.asker_name)
        lines = [texts.text("kept_quoting", lang, who=who)] if msg.quoting else []
        if not_theirs is not None:
            addressee = not_theirs.addressee or asker
            lines.append(texts.text("kept_not_yours", lang, addressee=addressee, who=who))
        elif rights.standing is Standing.TRAVELLER:
            lines.append(texts.text("kept_traveller", lang, who=who, asker=asker))
        elif rights.standing is Standing.NEWCOMER:
            lines.append(texts.text("kept_newcomer", lang, who=who))
        else:
            lines.append(texts.text("kept_not_theirs", lang, who=who, asker=asker))
        return lines

    def _ask(self, msg: IncomingMessage, session: SessionRow, lang: str) -> str:
        who, asker = self._person(msg), mention(self.chat.platform, session.asker_id, session.asker_name)
        change = change_of(msg.text, session.request)
        if change is not None:
            new, old = change
            return texts.text("suggestion_place", lang, who=who, new=quoted(new), old=quoted(old), asker=asker)
        words = " ".join(msg.text.split())
        words = words if len(words) <= WORDS_SHOWN else words[: WORDS_SHOWN - 1] + "…"
        return texts.text("suggestion_words", lang, who=who, words=quoted(words), asker=asker)

    def _person(self, msg: IncomingMessage) -> str:
        return mention(self.chat.platform, msg.user_id, msg.user_name, msg.handle)
