"""The Telegram surface (python-telegram-bot 22): long polling or webhook, live progress in one
edited message, questions with buttons, plans in HTML, all within Telegram's rate limits."""

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.errors import (
    AdapterStopped,
    DeliveryFailed,
    TelegramAdapterError,
    TelegramConfigError,
)

__all__ = ["AdapterStopped", "DeliveryFailed", "TelegramAdapter", "TelegramAdapterError", "TelegramConfigError"]
