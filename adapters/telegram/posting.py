"""Questions, answers, notices and files as Telegram messages: each in as many messages as it
takes, to the place it belongs to (the chat, or its forum topic), through the chat's lane.

An earlier attempt's parts are never sent again (the PartLog). What Telegram refuses becomes a
DeliveryFailed the delivery worker understands (`delivery_failed`); a forum topic that was
deleted ("message thread not found") is a permanent failure of that row, logged, and nothing
else: the chat's other topics go on. In a guest place (guests.py) a post is one guest answer.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram.error import (
    BadRequest,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from adapters.telegram.errors import AdapterStopped, DeliveryFailed
from adapters.telegram.guests import GuestPlaces
from adapters.telegram.lane import retry_seconds
from adapters.telegram.pacing import Outbox
from adapters.telegram.places import Place, thread_gone
from adapters.telegram.split import split_html
from adapters.telegram.transport import Markup, Transport
from bot.surface import Attachment, PartLog

log = logging.getLogger(__name__)


class Poster:
    def __init__(self, transport: Transport, outbox: Outbox, guests: GuestPlaces) -> None:
        self.transport = transport
        self.outbox = outbox
        self.guests = guests

    async def send_all(self, place: Place, kind: str, html: str, parts: PartLog, markup: Markup = None,
                       reply_to: int | None = None, lang: str = "en") -> None:
        """Send `html` in as many messages as it takes (the markup on the last, the reply on the
        first), skipping the parts an earlier attempt delivered; each part is recorded before the
        next is sent."""
        if self.guests.holds(place):
            if parts.done == 0:
                sent = await self._send(place, kind, functools.partial(self.guests.post, place, kind, html, lang))
                await parts.sent(sent, more=False)
            return
        chunks = split_html(html)
        for i in range(parts.done, len(chunks)):
            last = i == len(chunks) - 1
            send: Callable[[], Awaitable[Any]] = functools.partial(
                self.transport.send_html, place.chat_id, chunks[i], markup=markup if last else None,
                reply_to=reply_to if i == 0 else None, thread=place.thread)
            message_id = await self._send(place, kind, send)
            await parts.sent(str(message_id), more=not last)

    async def edit(self, place: Place, kind: str, message_id: int, html: str) -> None:
        """Edit a message the bot sent: its text becomes `html` and its buttons go."""
        await self._send(place, kind, functools.partial(self.transport.edit_html, place.chat_id, message_id, html))

    async def send_file(self, place: Place, file: Attachment, parts: PartLog) -> None:
        if parts.done:  # sent already by an earlier attempt
            return
        if self.guests.holds(place):
            log.warning("telegram: a guest bot sends no files: %s is not sent to %s", file.filename, place)
            raise DeliveryFailed(place.chat_id, "file", "a guest bot cannot send files", permanent=True)
        send = functools.partial(self.transport.send_document, place.chat_id, file.content.encode(), file.filename,
                                 caption=file.title, thread=place.thread)
        message_id = await self._send(place, "file", send)
        await parts.sent(str(message_id), more=False)

    async def _send(self, place: Place, kind: str, send: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await self.outbox.send(place.chat_id, kind, send)
        except TelegramError as exc:
            raise delivery_failed(place, kind, exc, self.outbox.time_scale) from exc
        except AdapterStopped as exc:
            raise DeliveryFailed(place.chat_id, kind, str(exc), permanent=False) from exc


def delivery_failed(where: Place, kind: str, exc: TelegramError, time_scale: float = 1.0) -> DeliveryFailed:
    """Blocked, chat gone, a request Telegram refuses: never retried. Network trouble and flood
    waits: retried by the delivery worker (after the wait Telegram asked for, on our clock). python-telegram-bot
    raises NetworkError for no connection, a timeout and any 5xx (BadRequest is a subclass of it,
    and is Telegram refusing the request): those are an outage of Telegram, not of this message."""
    if isinstance(exc, RetryAfter):
        return DeliveryFailed(where.chat_id, kind, str(exc), permanent=False,
                              retry_after=retry_seconds(exc, time_scale))
    if isinstance(exc, BadRequest) and where.thread and thread_gone(str(exc)):
        log.warning("telegram: topic %s of chat %s was deleted: the %s is not delivered", where.thread,
                    where.chat_id, kind)
        return DeliveryFailed(where.chat_id, kind, f"the forum topic {where.thread} was deleted ({exc})", permanent=True)
    permanent = isinstance(exc, Forbidden | BadRequest | InvalidToken)
    outage = isinstance(exc, NetworkError) and not isinstance(exc, BadRequest)
    return DeliveryFailed(where.chat_id, kind, str(exc), permanent=permanent, outage=outage)
