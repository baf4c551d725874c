"""How a conversation goes: how long a question waits, how far a run goes, what the model sees,
and team trips' size and sign-off."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from bot.settings.fields import SettingsGroup, alias, split_ids


class ConversationSettings(SettingsGroup):
    section = "Conversations"

    human_timeout_s: float = Field(
        default=86400, gt=0, validation_alias=alias("BOT_HUMAN_TIMEOUT_S"),
        description=(
            "How long a question waits for its answer; the deadline is stored and survives restarts. "
            "Then the run goes on without it."
        ),
    )
    remind_after_s: float = Field(
        default=14400, ge=0, validation_alias=alias("BOT_REMIND_AFTER_S"),
        description=(
            "One short reminder of a question still unanswered after this long, stored like the "
            "deadline (never sent twice). `0`, or a value at or past the deadline, sends none."
        ),
    )
    max_steps: int = Field(
        default=20, ge=1, le=200, validation_alias=alias("BOT_MAX_STEPS"),
        description="Steps (model calls) per run before the agent stops.",
    )
    history_messages: int = Field(
        default=60, ge=4, validation_alias=alias("BOT_HISTORY_MESSAGES"),
        description="Messages of the conversation the model sees, cut only at turn boundaries.",
    )
    max_message_chars: int = Field(
        default=8000, ge=100, validation_alias=alias("BOT_MAX_MESSAGE_CHARS"),
        description="Longer messages are refused with an explanation.",
    )
    timezone: str = Field(
        default="Asia/Shanghai", validation_alias=alias("BOT_TIMEZONE"),
        description='The time zone "today" and times are read in (an IANA name).',
    )
    home_city: str = Field(
        default="北京", validation_alias=alias("BOT_HOME_CITY"),
        description="Where `current_location` places a person who shared no location.",
    )


class TeamSettings(SettingsGroup):
    section = "Team trips"

    max_travellers: int = Field(
        default=12, ge=1, le=500, validation_alias=alias("BOT_MAX_TRAVELLERS"),
        description=(
            "The most travellers one request may name; a bigger team is refused with a message saying "
            "how many it named."
        ),
    )
    approvers: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=alias("BOT_APPROVERS"),
        description=(
            "Platform user ids (Slack `U…`, Telegram numeric ids or `@usernames`), comma-separated, "
            "who sign off team plans. A Slack channel can add its own with `/trip approver @who`. "
            "Empty: no sign-off."
        ),
    )
    signoff_remind_s: float = Field(
        default=14400, gt=0, validation_alias=alias("BOT_SIGNOFF_REMIND_S"),
        description="One reminder of a team plan still waiting for sign-off after this long.",
    )
    signoff_timeout_s: float = Field(
        default=3 * 86400, gt=0, validation_alias=alias("BOT_SIGNOFF_TIMEOUT_S"),
        description=(
            "How long a team plan waits for sign-off before it stands unapproved (stored: survives "
            "restarts)."
        ),
    )

    @field_validator("approvers", mode="before")
    @classmethod
    def _split_approvers(cls, v: object) -> object:
        return split_ids(v)
