"""Getting things to people: how long and how often a delivery is retried, and the pace the bot
keeps with Telegram and Slack."""

from __future__ import annotations

from pydantic import Field

from bot.settings.fields import SettingsGroup, alias


class DeliverySettings(SettingsGroup):
    section = "Delivery"

    delivery_deadline_s: float = Field(
        default=86400, gt=0, validation_alias=alias("BOT_DELIVERY_DEADLINE_S"),
        description=(
            "How long a plan, notice or file keeps being retried through an outage before it is "
            "given up (a question: until its answer deadline, `BOT_HUMAN_TIMEOUT_S`); a permanent "
            "refusal gives up at once."
        ),
    )
    delivery_backoff_s: float = Field(
        default=0.5, gt=0, le=60, validation_alias=alias("BOT_DELIVERY_BACKOFF_S"),
        description=(
            "The first retry's delay of a delivery, doubling with jitter up to "
            "`BOT_DELIVERY_MAX_BACKOFF_S`; a platform's retry-after wins."
        ),
    )
    delivery_max_backoff_s: float = Field(
        default=60, gt=0, le=3600, validation_alias=alias("BOT_DELIVERY_MAX_BACKOFF_S"),
        description=(
            "The longest wait between two tries of a row, and between two probes of a platform "
            "that is down."
        ),
    )
    platform_time_scale: float = Field(
        default=1.0, gt=0, le=100, validation_alias=alias("BOT_PLATFORM_TIME_SCALE"),
        description=(
            "How long one of Telegram's and Slack's seconds lasts on the bot's clock while it paces "
            "itself: the gaps between sends in a chat, the bot-wide window and each wait a 429 asks "
            "for are multiplied by it. 1.0 for the real services; below 1 only against fakes that run "
            "on the same clock (the tests run theirs at 0.05), and refused with a real Telegram or "
            "Slack configured."
        ),
    )
