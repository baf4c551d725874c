"""Errors of the Telegram adapter.

One root, typed fields::

    TelegramAdapterError
     ├── TelegramConfigError     the settings cannot start the adapter (no token, half a webhook)
     ├── NotTheBotApi            TELEGRAM_API_BASE_URL answers, but not as the Bot API (an HTML
     │                           page, an empty 404): one line, not "token rejected" and a page of HTML
     ├── DeliveryFailed          a message did not reach Telegram; also a bot.surface.DeliveryError
     │                           (permanent: blocked, chat gone, bad request; else worth a retry)
     └── AdapterStopped          the adapter stopped before the message could be sent
"""

from __future__ import annotations

import logging
import re

from bot.surface import DeliveryError


class TelegramAdapterError(Exception):
    """Root of every error raised by adapters.telegram."""


class TelegramConfigError(TelegramAdapterError):
    def __init__(self, setting: str, detail: str) -> None:
        super().__init__(f"{setting}: {detail}")
        self.setting = setting
        self.detail = detail


class NotTheBotApi(TelegramAdapterError):
    def __init__(self, base_url: str, status: str, body: str) -> None:
        super().__init__(f"TELEGRAM_API_BASE_URL ({base_url}) answers, but not as the Telegram Bot API: "
                         f"HTTP {status} with {body}")
        self.base_url = base_url
        self.status = status  # "404", or "2xx" when python-telegram-bot does not say which
        self.body = body


_STATUS = re.compile(r"\((\d{3})\)")
_UNPARSED = ". Parsing the server response "
_INVALID = "Invalid server response"  # python-telegram-bot's error for a 2xx answer that is not JSON


def not_the_bot_api(exc: BaseException, base_url: str) -> NotTheBotApi | None:
    """python-telegram-bot's error for an answer that is not the Bot API's JSON, as NotTheBotApi.
    It reads an empty 404 as InvalidToken (Bot.initialize then says the token was rejected, with
    the real error as its cause) and puts a whole HTML page in its message: look down the chain."""
    seen: BaseException | None = exc
    while seen is not None:
        text = str(seen)
        if _UNPARSED in text:
            head, _, payload = text.partition(_UNPARSED)
            status = m.group(1) if (m := _STATUS.search(head)) else "?"
            payload = payload.strip()
            if payload.startswith(("b''", 'b""')):
                return NotTheBotApi(base_url, status, "an empty body")
            if payload.lstrip("b'\"").lstrip().startswith("<"):
                return NotTheBotApi(base_url, status, "an HTML page")
            return NotTheBotApi(base_url, status, "a body that is not JSON")
        if text == _INVALID and isinstance(seen.__cause__, ValueError):
            return NotTheBotApi(base_url, "2xx", "a body that is not JSON")
        seen = seen.__cause__ or seen.__context__
    return None


class UnparsedAnswers(logging.Filter):
    """Drops python-telegram-bot's ERROR record (with a traceback and the whole page) for an answer
    that is not JSON: the adapter reports it as one NotTheBotApi line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Can not load invalid JSON data")


PTB_REQUEST_LOGGER = "telegram.request.BaseRequest"  # where python-telegram-bot logs it
UNPARSED_ANSWERS = UnparsedAnswers()  # stateless; one instance, so adding it twice adds it once


class DeliveryFailed(TelegramAdapterError, DeliveryError):
    def __init__(self, chat_id: int, kind: str, detail: str, *, permanent: bool,
                 retry_after: float | None = None, outage: bool = False) -> None:
        DeliveryError.__init__(self, f"could not send the {kind} to Telegram chat {chat_id}: {detail}",
                               permanent=permanent, retry_after=retry_after, outage=outage)
        self.chat_id = chat_id
        self.kind = kind
        self.detail = detail


class AdapterStopped(TelegramAdapterError):
    def __init__(self) -> None:
        super().__init__("the Telegram adapter stopped before the message was sent")
