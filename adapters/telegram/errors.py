"""Errors of the Telegram adapter.

One root, typed fields::

    TelegramAdapterError
     ├── TelegramConfigError     the settings cannot start the adapter (no token, half a webhook)
     ├── DeliveryFailed          Telegram refused a message for good (blocked, chat gone, bad request)
     └── AdapterStopped          the adapter stopped before the message could be sent
"""

from __future__ import annotations


class TelegramAdapterError(Exception):
    """Root of every error raised by adapters.telegram."""


class TelegramConfigError(TelegramAdapterError):
    def __init__(self, setting: str, detail: str) -> None:
        super().__init__(f"{setting}: {detail}")
        self.setting = setting
        self.detail = detail


class DeliveryFailed(TelegramAdapterError):
    def __init__(self, chat_id: int, kind: str, detail: str) -> None:
        super().__init__(f"could not send the {kind} to Telegram chat {chat_id}: {detail}")
        self.chat_id = chat_id
        self.kind = kind
        self.detail = detail


class AdapterStopped(TelegramAdapterError):
    def __init__(self) -> None:
        super().__init__("the Telegram adapter stopped before the message was sent")
