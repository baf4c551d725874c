"""A team plan's sign-off card once an approver decided: the card (the request with Approve /
Reject) is edited to say who decided what and when, and its buttons go (editMessageText without
a keyboard removes it). Its notice follows as a reply to the card unless the card says it all
(an approval); a Reject's notice asks the approver for the reason.

The decision's notice (kind `decided`, bot.team.signoff) names the card pressed (`reply_to`) and
the approver as a mention; who decided and when are the chat's sign-off, read from the store.
A card Telegram no longer lets us edit (deleted) is left as it is and the notice says the
decision instead. Both steps are parts of the notice's row: a retry never does one twice.

A sign-off that expires was pressed nowhere: its notice names the sign-off's cards the chat was
shown (the request and each reminder, bot.team.cards), and each is edited to "⌛ Nobody decided
by <deadline>" before the notice is said; each card's edit is a part of the notice's row, so a
retry edits none twice, and a card that is gone is skipped (a log line).

A press on a card whose sign-off is over (decided on another card, such as its reminder's, or
expired, or an older plan's) closes that card at once, before the chat says the press changes
nothing.
"""

from __future__ import annotations

import logging
import re
from typing import Protocol

from adapters.telegram import render, texts
from adapters.telegram.errors import DeliveryFailed
from adapters.telegram.places import Place
from adapters.telegram.posting import Poster
from bot.store.rows import SignoffRow
from bot.surface import ChatKey, IncomingMessage, Notice, PartLog, mention
from bot.team.cards import card_line
from bot.texts import detect_lang

log = logging.getLogger(__name__)


class SignoffReader(Protocol):
    async def signoff(self, chat: ChatKey) -> SignoffRow | None: ...


class SignoffCards:
    def __init__(self, poster: Poster, manager: SignoffReader, timezone: str) -> None:
        self._poster = poster
        self._manager = manager
        self._tz = timezone

    async def close(self, place: Place, notice: Notice, parts: PartLog) -> None:
        assert notice.reply_to is not None and notice.reply_to.isdigit()
        card = int(notice.reply_to)
        lang = detect_lang(notice.text)
        signoff = await self._manager.signoff(place.key)
        # an approval: the card says it all; a retry after the card's part: its notice is owed
        follows = parts.done > 0 or signoff is None or signoff.status != "approved"
        if parts.done == 0:
            line = decided_line(signoff, notice.text, lang, self._tz)
            if not await self._edit(place, card, line):
                follows = True  # the card is gone: the decision is said in a message instead
            await parts.sent(notice.reply_to, more=follows)
        if follows:
            await self._poster.send_all(place, "notice", render.notice_html(notice.text), _After(parts, 1),
                                        reply_to=card, lang=lang)

    async def expire(self, place: Place, notice: Notice, parts: PartLog) -> None:
        """An expired sign-off: every card of it the chat was shown (`notice.cards`) closes, one
        part each, then the notice is said (once: its own parts follow the cards')."""
        lang = detect_lang(notice.text)
        signoff = await self._manager.signoff(place.key)
        line = decided_line(signoff if signoff is not None and signoff.id == notice.closes else None, "", lang, self._tz)
        for card in notice.cards[parts.done:]:
            if card.isdigit():
                await self._edit(place, int(card), line)
            await parts.sent(card, more=True)
        await self._poster.send_all(place, "notice", render.notice_html(notice.text),
                                    _After(parts, len(notice.cards)), lang=lang)

    async def _edit(self, place: Place, card: int, line: str) -> bool:
        """Close one card: its text becomes `line`, its buttons go. False when it is gone (deleted:
        a log line); a fault worth a retry is raised for the row's retry."""
        try:
            await self._poster.edit(place, "notice", card, render.notice_html(line))
        except DeliveryFailed as exc:
            if not exc.permanent:
                raise
            if "not modified" in exc.detail:  # a press on it closed it already
                return True
            log.info("telegram: the sign-off card %s in %s was not closed: %s", card, place, exc)
            return False
        return True


    async def pressed(self, place: Place, press: IncomingMessage, lang: str) -> None:
        """An Approve / Reject press, before the chat has it: the card closes now if its sign-off
        is over (best effort: the chat's answer to the press does not depend on it)."""
        signoff = await self._manager.signoff(place.key)
        if (signoff is not None and signoff.id == press.question_id and signoff.open) or not (
                press.reply_to and press.reply_to.isdigit()):
            return
        current = signoff if signoff is not None and signoff.id == press.question_id else None
        try:
            await self._poster.edit(place, "notice", int(press.reply_to),
                                    render.notice_html(decided_line(current, "", lang, self._tz)))
        except DeliveryFailed as exc:
            log.info("telegram: the old sign-off card %s in %s was not closed: %s", press.reply_to, place, exc)


def decided_line(signoff: SignoffRow | None, said: str, lang: str, timezone: str) -> str:
    """What a closed card says (bot.team.cards.card_line) in Telegram's words; `said` is the
    decision's notice, which names the approver (with their name) as a mention."""
    def who(user_id: str) -> str:
        found = re.search(rf"<@{re.escape(user_id)}(?:\|[^<>|]*)?>", said)
        return found.group(0) if found else mention("telegram", user_id)

    return card_line(signoff, timezone, lambda key, **values: texts.text(key, lang, **values), who)


class _After:
    """The notice's own parts, after the cards' edits (the row's first `cards` parts)."""

    def __init__(self, parts: PartLog, cards: int) -> None:
        self._parts = parts
        self._cards = cards

    @property
    def done(self) -> int:
        return max(self._parts.done - self._cards, 0)

    async def sent(self, message_id: str, *, more: bool) -> None:
        await self._parts.sent(message_id, more=more)
