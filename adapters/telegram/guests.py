"""Guest mode (Bot API 10.0): the bot used where it is summoned without being a member.

A person mentions the bot's @username in a chat the bot is no member of; Telegram delivers the
message as the update `guest_message` (a Message with a `guest_query_id`), and the bot may speak
there only by answering that query (`answerGuestQuery`: one message, as an inline result). So a
guest place gets no progress message, typing, draft, file or buttons: it cannot be sent to.
Each post answers the oldest query of the place not yet answered; a post with none left (a
reminder, a notice after the answer) replaces the text of the last message answered
(`editMessageText` by `inline_message_id`), so the newest thing the bot has to say shows. A
reply is one message: a longer one is cut, and says so.

The queries are known to the process that received them only (nothing about them is stored):
with several processes on one database, a guest conversation is answered only while its chat is
served by the process its summons reached. A place the bot is later added to (an ordinary
message arrives from it) stops being a guest place.
"""

from __future__ import annotations

import logging
import uuid
from collections import deque
from dataclasses import dataclass, field

from telegram.error import TelegramError

from adapters.telegram import texts
from adapters.telegram.errors import DeliveryFailed
from adapters.telegram.places import Place
from adapters.telegram.split import LIMIT, html_to_plain, split_html
from adapters.telegram.transport import Transport

log = logging.getLogger(__name__)

_KEPT = 64  # unanswered queries kept per place (a person summoning the bot again and again)
_ROOM = 300  # characters kept free in a cut reply for the line saying it was cut


@dataclass
class _Guest:
    queries: deque[str] = field(default_factory=lambda: deque(maxlen=_KEPT))
    last_inline: str | None = None  # the last message answered: what a post with no query edits


class GuestPlaces:
    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._places: dict[Place, _Guest] = {}

    def summoned(self, place: Place, query_id: str) -> None:
        self._places.setdefault(place, _Guest()).queries.append(query_id)

    def joined(self, place: Place) -> None:
        """The bot is a member there now (an ordinary message came): it sends as anywhere else."""
        self._places.pop(place, None)

    def holds(self, place: Place) -> bool:
        return place in self._places

    async def post(self, place: Place, kind: str, html: str, lang: str) -> str:
        """Say `html` as one guest message (cut to fit one); its inline_message_id."""
        guest = self._places[place]
        chunks = split_html(html)
        if len(chunks) > 1:
            html = f"{split_html(html, LIMIT - _ROOM)[0]}\n{texts.text('guest_cut', lang)}"
        if guest.queries:
            query = guest.queries.popleft()
            title = html_to_plain(html).strip().splitlines()[0] if html.strip() else kind
            try:
                guest.last_inline = await self.transport.answer_guest(query, uuid.uuid4().hex, title, html)
            except TelegramError:
                guest.queries.appendleft(query)  # still unanswered: a retry answers it
                raise
            return guest.last_inline
        if guest.last_inline is not None:
            await self.transport.edit_inline(guest.last_inline, html)
            return guest.last_inline
        log.warning("telegram: nothing to answer in guest place %s: the %s is not shown", place, kind)
        raise DeliveryFailed(place.chat_id, kind, "a guest bot speaks only in answer to a summons, and none is "
                             "waiting here", permanent=True)
