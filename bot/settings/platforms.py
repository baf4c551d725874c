"""Telegram and Slack: the tokens that turn each surface on, and where its API is."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from bot.settings.fields import SettingsGroup, alias, http_url


class TelegramSettings(SettingsGroup):
    section = "Telegram"

    telegram_bot_token: str | None = Field(
        default=None, validation_alias=alias("TELEGRAM_BOT_TOKEN"),
        description="BotFather's token: turns the Telegram surface on.",
    )
    telegram_api_base_url: str = Field(
        default="https://api.telegram.org/bot", validation_alias=alias("TELEGRAM_API_BASE_URL"),
        description=(
            "Bot API base URL with python-telegram-bot's `base_url` rule (the token is appended): a "
            "self-hosted `telegram-bot-api`, or the tests' fake."
        ),
    )
    telegram_webhook_url: str | None = Field(
        default=None, validation_alias=alias("TELEGRAM_WEBHOOK_URL"),
        description=(
            "Webhook mode instead of long polling: the public HTTPS URL Telegram posts to, registered "
            "as given; the bot serves its path on `BOT_HOST:BOT_PORT`. Needs "
            "`TELEGRAM_WEBHOOK_SECRET`."
        ),
    )
    telegram_webhook_secret: str | None = Field(
        default=None, validation_alias=alias("TELEGRAM_WEBHOOK_SECRET"),
        description=(
            "The secret token Telegram sends with every webhook delivery "
            "(`X-Telegram-Bot-Api-Secret-Token`); a delivery without it gets 403. Characters `A-Z a-z "
            "0-9 _ -`."
        ),
    )

    @field_validator("telegram_api_base_url", "telegram_webhook_url", mode="before")
    @classmethod
    def _telegram_urls(cls, v: object, info: ValidationInfo) -> object:
        return http_url(cls, v, info)


class SlackSettings(SettingsGroup):
    section = "Slack"

    slack_bot_token: str | None = Field(
        default=None, validation_alias=alias("SLACK_BOT_TOKEN"),
        description=(
            "The app's Bot User OAuth Token (`xoxb-…`): turns the Slack surface on. Needs "
            "`SLACK_SIGNING_SECRET` (HTTP events) or `SLACK_APP_TOKEN` (Socket Mode)."
        ),
    )
    slack_signing_secret: str | None = Field(
        default=None, validation_alias=alias("SLACK_SIGNING_SECRET"),
        description=(
            "The app's signing secret: events and button clicks arrive over HTTP at `POST "
            "/slack/events`, each signature checked."
        ),
    )
    slack_app_token: str | None = Field(
        default=None, validation_alias=alias("SLACK_APP_TOKEN"),
        description=(
            "An app-level token (`xapp-…`, `connections:write`): Socket Mode over a websocket instead "
            "of HTTP events; nothing needs to be reachable from outside."
        ),
    )
    slack_api_base_url: str = Field(
        default="https://slack.com/api/", validation_alias=alias("SLACK_API_BASE_URL"),
        description="Slack Web API base URL (a proxy, or the tests' fake).",
    )

    @field_validator("slack_api_base_url", mode="before")
    @classmethod
    def _slack_url(cls, v: object, info: ValidationInfo) -> object:
        return http_url(cls, v, info)
