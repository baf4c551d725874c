"""The one HTTP server, and who may use the bot: tokens, rate limits, the allowlist."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from bot.settings.fields import SettingsGroup, alias, split_ids


class AccessSettings(SettingsGroup):
    section = "HTTP server and access"

    host: str = Field(
        default="127.0.0.1", validation_alias=alias("BOT_HOST"),
        description=(
            "Address of the one HTTP server (web chat, Slack events, Telegram webhook, `/healthz`, "
            "`/metrics`). Anything but loopback requires `BOT_WEB_TOKEN`."
        ),
    )
    port: int = Field(
        default=8000, ge=0, le=65535, validation_alias=alias("BOT_PORT"),
        description="Its port; `0` picks a free one.",
    )
    web_token: str | None = Field(
        default=None, validation_alias=alias("BOT_WEB_TOKEN"),
        description=(
            "Access token of the web chat (16+ characters), checked on every API and event-stream "
            "request and on `/metrics`. Required when `BOT_HOST` is not a loopback address."
        ),
    )
    admin_token: str | None = Field(
        default=None, validation_alias=alias("BOT_ADMIN_TOKEN"),
        description=(
            "Token of the operator's page at `/admin` (16+ characters); the page is served only when "
            "it is set."
        ),
    )
    rate_per_user: int = Field(
        default=20, ge=0, validation_alias=alias("BOT_RATE_PER_USER"),
        description=(
            "Messages a minute per person, on every surface (bursts of half of it); over it the web "
            "API answers 429 with `Retry-After`. `0` turns it off."
        ),
    )
    rate_per_ip: int = Field(
        default=60, ge=0, validation_alias=alias("BOT_RATE_PER_IP"),
        description=(
            "Web API writes a minute per client address (bursts of a quarter of it). `0` turns it "
            "off."
        ),
    )
    allowed_users: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=alias("BOT_ALLOWED_USERS"),
        description=(
            "Platform user ids allowed to use the bot, comma-separated (Telegram numeric ids, Slack "
            "`U…`, web session ids); empty lets everyone in. Others get a polite refusal naming their "
            "id."
        ),
    )

    @field_validator("allowed_users", mode="before")
    @classmethod
    def _split_allowed(cls, v: object) -> object:
        return split_ids(v)

    @field_validator("web_token", "admin_token", mode="after")
    @classmethod
    def _token_strength(cls, v: str | None) -> str | None:
        if v is not None and len(v.strip()) < 16:
            raise ValueError("must be at least 16 characters (e.g. `python -c 'import secrets; print(secrets.token_urlsafe(24))'`)")
        return v.strip() if v is not None else None

    @property
    def host_is_loopback(self) -> bool:
        host = self.host.strip().strip("[]").lower()
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def user_allowed(self, user_id: str) -> bool:
        return not self.allowed_users or user_id in self.allowed_users
