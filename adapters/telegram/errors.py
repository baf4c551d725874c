"""Errors of the Telegram adapter.

One root, typed fields::

    TelegramAdapterError
     ├── TelegramConfigError     the settings cannot start the adapter (no token, half a webhook)
     ├── DeliveryFailed          a message did not reach Telegram; also a bot.surface.DeliveryError
     │                           (permanent: blocked, chat gone, bad request; else worth a retry)
     └── AdapterStopped          the adapter stopped before the message could be sent
"""

from __future__ import annotations

from bot.surface import DeliveryError


class TelegramAdapterError(Exception):
    """Root of every error raised by adapters.telegram."""


class TelegramConfigError(TelegramAdapterError):
    def __init__(self, setting: str, detail: str) -> None:
        super().__init__(f"{setting}: {detail}")
        self.setting = setting
        self.detail = detail


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
