"""Settings from the environment and `.env` (the names are the public contract, DESIGN §7)."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name, name.lower())


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    openai_api_key: str | None = Field(default=None, validation_alias=_alias("OPENAI_API_KEY"))
    openai_base_url: str | None = Field(default=None, validation_alias=_alias("OPENAI_BASE_URL"))
    llm_model: str = Field(default="gpt-4o-mini", validation_alias=_alias("BOT_LLM_MODEL"))
    llm_context_tokens: int = Field(default=128000, gt=0, validation_alias=_alias("BOT_LLM_CONTEXT_TOKENS"))
    llm_timeout_s: float = Field(default=60.0, gt=0, validation_alias=_alias("BOT_LLM_TIMEOUT_S"))
    llm_max_retries: int = Field(default=4, ge=0, validation_alias=_alias("BOT_LLM_MAX_RETRIES"))
    llm_stream: bool = Field(default=True, validation_alias=_alias("BOT_LLM_STREAM"))
    # USD per million (input, output) tokens, over the defaults of bot.observe.model_prices: {"model": [0.15, 0.6]}
    llm_prices: dict[str, tuple[float, float]] = Field(default_factory=dict, validation_alias=_alias("BOT_LLM_PRICES"))

    telegram_bot_token: str | None = Field(default=None, validation_alias=_alias("TELEGRAM_BOT_TOKEN"))
    telegram_api_base_url: str = Field(
        default="https://api.telegram.org/bot", validation_alias=_alias("TELEGRAM_API_BASE_URL")
    )
    telegram_webhook_url: str | None = Field(default=None, validation_alias=_alias("TELEGRAM_WEBHOOK_URL"))
    telegram_webhook_secret: str | None = Field(
        default=None, validation_alias=_alias("TELEGRAM_WEBHOOK_SECRET")
    )

    slack_bot_token: str | None = Field(default=None, validation_alias=_alias("SLACK_BOT_TOKEN"))
    slack_signing_secret: str | None = Field(default=None, validation_alias=_alias("SLACK_SIGNING_SECRET"))
    slack_app_token: str | None = Field(default=None, validation_alias=_alias("SLACK_APP_TOKEN"))
    slack_api_base_url: str = Field(default="https://slack.com/api/", validation_alias=_alias("SLACK_API_BASE_URL"))

    db_path: Path = Field(default=Path("./data/bot.sqlite3"), validation_alias=_alias("BOT_DB_PATH"))
    # PostgreSQL instead of SQLite (wins over BOT_DB_PATH): several processes on one database
    db_url: str | None = Field(default=None, validation_alias=_alias("BOT_DB_URL"))
    db_pool_max: int = Field(default=20, ge=2, le=200, validation_alias=_alias("BOT_DB_POOL_MAX"))
    # PostgreSQL: how long a process's hold on a chat lasts unless renewed (renewed every third of it)
    lease_s: float = Field(default=15.0, ge=0.5, le=600, validation_alias=_alias("BOT_LEASE_S"))
    host: str = Field(default="127.0.0.1", validation_alias=_alias("BOT_HOST"))
    port: int = Field(default=8000, ge=0, le=65535, validation_alias=_alias("BOT_PORT"))
    web_token: str | None = Field(default=None, validation_alias=_alias("BOT_WEB_TOKEN"))
    # the operator's page at /admin is served only with this token set
    admin_token: str | None = Field(default=None, validation_alias=_alias("BOT_ADMIN_TOKEN"))
    rate_per_user: int = Field(default=20, ge=0, validation_alias=_alias("BOT_RATE_PER_USER"))
    rate_per_ip: int = Field(default=60, ge=0, validation_alias=_alias("BOT_RATE_PER_IP"))
    allowed_users: Annotated[list[str], NoDecode] = Field(default_factory=list, validation_alias=_alias("BOT_ALLOWED_USERS"))
    human_timeout_s: float = Field(default=86400, gt=0, validation_alias=_alias("BOT_HUMAN_TIMEOUT_S"))
    # one reminder of a question still unanswered after this long (0: none; never at or past the deadline)
    remind_after_s: float = Field(default=14400, ge=0, validation_alias=_alias("BOT_REMIND_AFTER_S"))
    max_travellers: int = Field(default=12, ge=1, le=500, validation_alias=_alias("BOT_MAX_TRAVELLERS"))
    approvers: Annotated[list[str], NoDecode] = Field(default_factory=list, validation_alias=_alias("BOT_APPROVERS"))
    signoff_timeout_s: float = Field(default=3 * 86400, gt=0, validation_alias=_alias("BOT_SIGNOFF_TIMEOUT_S"))
    signoff_remind_s: float = Field(default=14400, gt=0, validation_alias=_alias("BOT_SIGNOFF_REMIND_S"))
    validate_plans: bool = Field(default=True, validation_alias=_alias("BOT_VALIDATE"))
    validate_rounds: int = Field(default=2, ge=0, le=5, validation_alias=_alias("BOT_VALIDATE_ROUNDS"))
    travel_data: Literal["sandbox", "live"] = Field(default="sandbox", validation_alias=_alias("BOT_TRAVEL_DATA"))
    home_city: str = Field(default="北京", validation_alias=_alias("BOT_HOME_CITY"))
    timezone: str = Field(default="Asia/Shanghai", validation_alias=_alias("BOT_TIMEZONE"))

    max_steps: int = Field(default=20, ge=1, le=200, validation_alias=_alias("BOT_MAX_STEPS"))
    delivery_attempts: int = Field(default=8, ge=1, le=100, validation_alias=_alias("BOT_DELIVERY_ATTEMPTS"))
    delivery_backoff_s: float = Field(default=0.5, gt=0, le=60, validation_alias=_alias("BOT_DELIVERY_BACKOFF_S"))
    history_messages: int = Field(default=60, ge=4, validation_alias=_alias("BOT_HISTORY_MESSAGES"))
    max_message_chars: int = Field(default=8000, ge=100, validation_alias=_alias("BOT_MAX_MESSAGE_CHARS"))
    # How long one of Telegram's and Slack's seconds lasts on our clock while the bot paces itself:
    # the gaps between sends in a chat, the bot-wide window and each wait a 429 asks for are
    # multiplied by it. 1.0 for the real services (below 1 only against fakes on the same clock:
    # the tests run theirs at 0.05, so pacing is exactly as strict, twenty times sooner)
    platform_time_scale: float = Field(default=1.0, gt=0, le=100, validation_alias=_alias("BOT_PLATFORM_TIME_SCALE"))
    log_level: str = Field(default="INFO", validation_alias=_alias("BOT_LOG_LEVEL"))
    # json: one JSON object per line, with the chat key, session, run and trace of the chat it is about
    log_format: Literal["text", "json"] = Field(default="text", validation_alias=_alias("BOT_LOG_FORMAT"))
    # tracing (OpenTelemetry): off unless an OTLP endpoint is set or BOT_TRACE=console
    otel_endpoint: str | None = Field(default=None, validation_alias=_alias("OTEL_EXPORTER_OTLP_ENDPOINT"))
    # the standard variable; the SDK would read it too, but an explicit service.name overrides it
    otel_service_name: str = Field(default="tripbot", min_length=1, validation_alias=_alias("OTEL_SERVICE_NAME"))
    trace: Literal["off", "console"] = Field(default="off", validation_alias=_alias("BOT_TRACE"))

    # live travel data providers (BOT_TRAVEL_DATA=live)
    amap_key: str | None = Field(default=None, validation_alias=_alias("AMAP_KEY"))
    searxng_url: str | None = Field(default=None, validation_alias=_alias("SEARXNG_URL"))
    tavily_api_key: str | None = Field(default=None, validation_alias=_alias("TAVILY_API_KEY"))
    duffel_token: str | None = Field(default=None, validation_alias=_alias("DUFFEL_TOKEN"))
    # base URLs of the live services (tests and self-hosted proxies point them elsewhere)
    amap_base_url: str | None = Field(default=None, validation_alias=_alias("AMAP_BASE_URL"))
    tavily_base_url: str | None = Field(default=None, validation_alias=_alias("TAVILY_BASE_URL"))
    rail12306_base_url: str | None = Field(default=None, validation_alias=_alias("RAIL12306_BASE_URL"))
    duffel_base_url: str | None = Field(default=None, validation_alias=_alias("DUFFEL_BASE_URL"))

    @field_validator("allowed_users", "approvers", mode="before")
    @classmethod
    def _split_users(cls, v: object) -> object:
        if isinstance(v, str):
            return [u.strip() for u in v.replace(";", ",").split(",") if u.strip()]
        if isinstance(v, int):
            return [str(v)]
        return v

    @field_validator("db_url", mode="before")
    @classmethod
    def _postgres_url(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip()
            if not v:
                return None
            if not v.startswith(("postgresql://", "postgres://")):
                raise ValueError("must be a postgresql://user@host:port/database URL (SQLite takes BOT_DB_PATH)")
        return v

    @field_validator("trace", mode="before")
    @classmethod
    def _trace_off(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip().lower()
            return v if v else "off"
        return v

    @field_validator("validate_plans", mode="before")
    @classmethod
    def _on_off(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() in {"on", "yes"}:
            return True
        if isinstance(v, str) and v.strip().lower() in {"off", "no"}:
            return False
        return v

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

    def problems(self) -> list[tuple[str, str]]:
        """Settings that are each valid but do not fit together: (SETTING, what is wrong)."""
        out: list[tuple[str, str]] = []
        if self.slack_bot_token and not (self.slack_signing_secret or self.slack_app_token):
            out.append(("SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN is set but neither SLACK_SIGNING_SECRET "
                        "(HTTP events) nor SLACK_APP_TOKEN (Socket Mode) is"))
        if bool(self.telegram_webhook_url) != bool(self.telegram_webhook_secret):
            missing = "TELEGRAM_WEBHOOK_SECRET" if self.telegram_webhook_url else "TELEGRAM_WEBHOOK_URL"
            out.append((missing, "webhook mode needs both TELEGRAM_WEBHOOK_URL and TELEGRAM_WEBHOOK_SECRET"))
        if self.platform_time_scale < 1 and self._real_platforms():
            out.append(("BOT_PLATFORM_TIME_SCALE", f"is {self.platform_time_scale}, below 1, with "
                        f"{' and '.join(self._real_platforms())}: the bot would send faster than the real "
                        "service allows and be rate-limited (below 1 is for fakes on the same clock)"))
        if not self.host_is_loopback and not self.web_token:
            out.append(("BOT_WEB_TOKEN", f"is required when BOT_HOST={self.host} is not a loopback address "
                        "(anyone who can reach the port could run up the model bill)"))
        return out

    def _real_platforms(self) -> list[str]:
        """The real services (not a fake or a proxy at another address) this configuration talks to."""
        real = []
        if self.telegram_bot_token and self.telegram_api_base_url == _field_default("telegram_api_base_url"):
            real.append("Telegram")
        if self.slack_bot_token and self.slack_api_base_url == _field_default("slack_api_base_url"):
            real.append("Slack")
        return real

    @property
    def store_kind(self) -> Literal["sqlite", "postgres"]:
        return "postgres" if self.db_url else "sqlite"

    @property
    def offline_model(self) -> bool:
        return not self.openai_api_key

    def user_allowed(self, user_id: str) -> bool:
        return not self.allowed_users or user_id in self.allowed_users


def _field_default(name: str) -> object:
    return Settings.model_fields[name].default
