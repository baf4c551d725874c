"""Settings from the environment and `.env`.

The variable names are the public contract. Every field has a description: the docs' configuration
reference is generated from them (scripts/docs_gen.py), and tests/test_docs.py fails on a field
without one.
"""

from __future__ import annotations

import importlib.util
import ipaddress
from pathlib import Path
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import AliasChoices, Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _alias(name: str) -> AliasChoices:
    return AliasChoices(name, name.lower())


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package of a dotted name is missing
        return False


def _extra(name: str, what: str) -> str:
    return f"{what} needs the [{name}] extra, which is not installed: pip install 'travel-agent-bot[{name}]'"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    openai_api_key: str | None = Field(
        default=None, validation_alias=_alias("OPENAI_API_KEY"),
        description=(
            "Key of any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, vLLM, Ollama). Unset: the "
            "rule-based offline planner answers instead of a model."
        ),
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=_alias("OPENAI_BASE_URL"),
        description="Base URL of that endpoint; unset means OpenAI's own.",
    )
    llm_model: str = Field(
        default="gpt-4o-mini", validation_alias=_alias("BOT_LLM_MODEL"),
        description="The model the agent and the Validator ask.",
    )
    llm_context_tokens: int = Field(
        default=128000, gt=0, validation_alias=_alias("BOT_LLM_CONTEXT_TOKENS"),
        description=(
            "Context window assumed for a model the bot does not know; requests are checked against "
            "it before they are sent."
        ),
    )
    llm_timeout_s: float = Field(
        default=60.0, gt=0, validation_alias=_alias("BOT_LLM_TIMEOUT_S"),
        description="Timeout of one model request, in seconds.",
    )
    llm_max_retries: int = Field(
        default=4, ge=0, validation_alias=_alias("BOT_LLM_MAX_RETRIES"),
        description=(
            "Retries of a model call's transient faults (connection, timeout, 429, 5xx; `Retry-After` "
            "obeyed up to 60 s). Never for 400/401/403 or an overflowing context."
        ),
    )
    llm_stream: bool = Field(
        default=True, validation_alias=_alias("BOT_LLM_STREAM"),
        description=(
            "Ask the model for streamed replies, so answers appear as they are written. `false` for "
            "an endpoint that cannot stream tool calls: answers then appear whole; steps and Stop "
            "work as before."
        ),
    )
    llm_prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, validation_alias=_alias("BOT_LLM_PRICES"),
        description=(
            'What model calls cost, as JSON `{"model": [input, output]}` in US dollars per million '
            "tokens, over the built-in list prices of common models. A dated name "
            "(`gpt-4o-mini-2024-07-18`) takes the price of the longest known name it starts with; an "
            "unknown model counts 0 (said once in the log)."
        ),
    )

    telegram_bot_token: str | None = Field(
        default=None, validation_alias=_alias("TELEGRAM_BOT_TOKEN"),
        description="BotFather's token: turns the Telegram surface on.",
    )
    telegram_api_base_url: str = Field(
        default="https://api.telegram.org/bot", validation_alias=_alias("TELEGRAM_API_BASE_URL"),
        description=(
            "Bot API base URL with python-telegram-bot's `base_url` rule (the token is appended): a "
            "self-hosted `telegram-bot-api`, or the tests' fake."
        ),
    )
    telegram_webhook_url: str | None = Field(
        default=None, validation_alias=_alias("TELEGRAM_WEBHOOK_URL"),
        description=(
            "Webhook mode instead of long polling: the public HTTPS URL Telegram posts to, registered "
            "as given; the bot serves its path on `BOT_HOST:BOT_PORT`. Needs "
            "`TELEGRAM_WEBHOOK_SECRET`."
        ),
    )
    telegram_webhook_secret: str | None = Field(
        default=None, validation_alias=_alias("TELEGRAM_WEBHOOK_SECRET"),
        description=(
            "The secret token Telegram sends with every webhook delivery "
            "(`X-Telegram-Bot-Api-Secret-Token`); a delivery without it gets 403. Characters `A-Z a-z "
            "0-9 _ -`."
        ),
    )

    slack_bot_token: str | None = Field(
        default=None, validation_alias=_alias("SLACK_BOT_TOKEN"),
        description=(
            "The app's Bot User OAuth Token (`xoxb-…`): turns the Slack surface on. Needs "
            "`SLACK_SIGNING_SECRET` (HTTP events) or `SLACK_APP_TOKEN` (Socket Mode)."
        ),
    )
    slack_signing_secret: str | None = Field(
        default=None, validation_alias=_alias("SLACK_SIGNING_SECRET"),
        description=(
            "The app's signing secret: events and button clicks arrive over HTTP at `POST "
            "/slack/events`, each signature checked."
        ),
    )
    slack_app_token: str | None = Field(
        default=None, validation_alias=_alias("SLACK_APP_TOKEN"),
        description=(
            "An app-level token (`xapp-…`, `connections:write`): Socket Mode over a websocket instead "
            "of HTTP events; nothing needs to be reachable from outside."
        ),
    )
    slack_api_base_url: str = Field(
        default="https://slack.com/api/", validation_alias=_alias("SLACK_API_BASE_URL"),
        description="Slack Web API base URL (a proxy, or the tests' fake).",
    )

    db_path: Path = Field(
        default=Path("./data/bot.sqlite3"), validation_alias=_alias("BOT_DB_PATH"),
        description="The SQLite file, the default store (its folder is created).",
    )
    db_url: str | None = Field(
        default=None, validation_alias=_alias("BOT_DB_URL"),
        description=(
            "PostgreSQL instead of SQLite, `postgresql://user:password@host:5432/database` (asyncpg "
            "reads it: `?sslmode=require` works). Wins over `BOT_DB_PATH`; several processes may "
            "share the database."
        ),
    )
    db_pool_max: int = Field(
        default=20, ge=2, le=200, validation_alias=_alias("BOT_DB_POOL_MAX"),
        description="PostgreSQL connections per process, all opened at start and kept.",
    )
    lease_s: float = Field(
        default=15.0, ge=0.5, le=600, validation_alias=_alias("BOT_LEASE_S"),
        description=(
            "PostgreSQL: how long a process's hold on a chat lasts unless renewed (renewed every "
            "third of it). A dead process's chats move to another after about this long."
        ),
    )
    host: str = Field(
        default="127.0.0.1", validation_alias=_alias("BOT_HOST"),
        description=(
            "Address of the one HTTP server (web chat, Slack events, Telegram webhook, `/healthz`, "
            "`/metrics`). Anything but loopback requires `BOT_WEB_TOKEN`."
        ),
    )
    port: int = Field(
        default=8000, ge=0, le=65535, validation_alias=_alias("BOT_PORT"),
        description="Its port; `0` picks a free one.",
    )
    web_token: str | None = Field(
        default=None, validation_alias=_alias("BOT_WEB_TOKEN"),
        description=(
            "Access token of the web chat (16+ characters), checked on every API and event-stream "
            "request and on `/metrics`. Required when `BOT_HOST` is not a loopback address."
        ),
    )
    admin_token: str | None = Field(
        default=None, validation_alias=_alias("BOT_ADMIN_TOKEN"),
        description=(
            "Token of the operator's page at `/admin` (16+ characters); the page is served only when "
            "it is set."
        ),
    )
    rate_per_user: int = Field(
        default=20, ge=0, validation_alias=_alias("BOT_RATE_PER_USER"),
        description=(
            "Messages a minute per person, on every surface (bursts of half of it); over it the web "
            "API answers 429 with `Retry-After`. `0` turns it off."
        ),
    )
    rate_per_ip: int = Field(
        default=60, ge=0, validation_alias=_alias("BOT_RATE_PER_IP"),
        description=(
            "Web API writes a minute per client address (bursts of a quarter of it). `0` turns it "
            "off."
        ),
    )
    allowed_users: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=_alias("BOT_ALLOWED_USERS"),
        description=(
            "Platform user ids allowed to use the bot, comma-separated (Telegram numeric ids, Slack "
            "`U…`, web session ids); empty lets everyone in. Others get a polite refusal naming their "
            "id."
        ),
    )
    human_timeout_s: float = Field(
        default=86400, gt=0, validation_alias=_alias("BOT_HUMAN_TIMEOUT_S"),
        description=(
            "How long a question waits for its answer; the deadline is stored and survives restarts. "
            "Then the run goes on without it."
        ),
    )
    remind_after_s: float = Field(
        default=14400, ge=0, validation_alias=_alias("BOT_REMIND_AFTER_S"),
        description=(
            "One short reminder of a question still unanswered after this long, stored like the "
            "deadline (never sent twice). `0`, or a value at or past the deadline, sends none."
        ),
    )
    max_travellers: int = Field(
        default=12, ge=1, le=500, validation_alias=_alias("BOT_MAX_TRAVELLERS"),
        description=(
            "The most travellers one request may name; a bigger team is refused with a message saying "
            "how many it named."
        ),
    )
    approvers: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=_alias("BOT_APPROVERS"),
        description=(
            "Platform user ids (Slack `U…`, Telegram numeric ids or `@usernames`), comma-separated, "
            "who sign off team plans. A Slack channel can add its own with `/trip approver @who`. "
            "Empty: no sign-off."
        ),
    )
    signoff_timeout_s: float = Field(
        default=3 * 86400, gt=0, validation_alias=_alias("BOT_SIGNOFF_TIMEOUT_S"),
        description=(
            "How long a team plan waits for sign-off before it stands unapproved (stored: survives "
            "restarts)."
        ),
    )
    signoff_remind_s: float = Field(
        default=14400, gt=0, validation_alias=_alias("BOT_SIGNOFF_REMIND_S"),
        description="One reminder of a team plan still waiting for sign-off after this long.",
    )
    validate_plans: bool = Field(
        default=True, validation_alias=_alias("BOT_VALIDATE"),
        description="Grade answers with the Validator before they are posted (`on`/`off`).",
    )
    validate_rounds: int = Field(
        default=2, ge=0, le=5, validation_alias=_alias("BOT_VALIDATE_ROUNDS"),
        description=(
            "Re-plan rounds when the Validator is not satisfied, before the plan is posted with its "
            "problems stated."
        ),
    )
    travel_data: Literal["sandbox", "live"] = Field(
        default="sandbox", validation_alias=_alias("BOT_TRAVEL_DATA"),
        description=(
            "`sandbox`: the built-in offline data (real geography, synthetic schedules). `live`: real "
            "services where a key is set below, the sandbox for the rest."
        ),
    )
    home_city: str = Field(
        default="北京", validation_alias=_alias("BOT_HOME_CITY"),
        description="Where `current_location` places a person who shared no location.",
    )
    fx_rates: str | None = Field(
        default=None, validation_alias=_alias("BOT_FX_RATES"),
        description=(
            "Exchange rates into CNY and the date they are from, e.g. `USD=7.17,GBP=9.80@2025-06-30`: "
            "fares quoted in another currency (Duffel) are converted with them for filters and totals, "
            "and the plan says which rates it used. Unset: built-in approximate rates, said as such."
        ),
    )
    timezone: str = Field(
        default="Asia/Shanghai", validation_alias=_alias("BOT_TIMEZONE"),
        description='The time zone "today" and times are read in (an IANA name).',
    )

    max_steps: int = Field(
        default=20, ge=1, le=200, validation_alias=_alias("BOT_MAX_STEPS"),
        description="Steps (model calls) per run before the agent stops.",
    )
    delivery_deadline_s: float = Field(
        default=86400, gt=0, validation_alias=_alias("BOT_DELIVERY_DEADLINE_S"),
        description=(
            "How long a plan, notice or file keeps being retried through an outage before it is "
            "given up (a question: until its answer deadline, `BOT_HUMAN_TIMEOUT_S`); a permanent "
            "refusal gives up at once."
        ),
    )
    delivery_backoff_s: float = Field(
        default=0.5, gt=0, le=60, validation_alias=_alias("BOT_DELIVERY_BACKOFF_S"),
        description=(
            "The first retry's delay of a delivery, doubling with jitter up to "
            "`BOT_DELIVERY_MAX_BACKOFF_S`; a platform's retry-after wins."
        ),
    )
    delivery_max_backoff_s: float = Field(
        default=60, gt=0, le=3600, validation_alias=_alias("BOT_DELIVERY_MAX_BACKOFF_S"),
        description=(
            "The longest wait between two tries of a row, and between two probes of a platform "
            "that is down."
        ),
    )
    history_messages: int = Field(
        default=60, ge=4, validation_alias=_alias("BOT_HISTORY_MESSAGES"),
        description="Messages of the conversation the model sees, cut only at turn boundaries.",
    )
    max_message_chars: int = Field(
        default=8000, ge=100, validation_alias=_alias("BOT_MAX_MESSAGE_CHARS"),
        description="Longer messages are refused with an explanation.",
    )
    platform_time_scale: float = Field(
        default=1.0, gt=0, le=100, validation_alias=_alias("BOT_PLATFORM_TIME_SCALE"),
        description=(
            "How long one of Telegram's and Slack's seconds lasts on the bot's clock while it paces "
            "itself: the gaps between sends in a chat, the bot-wide window and each wait a 429 asks "
            "for are multiplied by it. 1.0 for the real services; below 1 only against fakes that run "
            "on the same clock (the tests run theirs at 0.05), and refused with a real Telegram or "
            "Slack configured."
        ),
    )
    log_level: str = Field(
        default="INFO", validation_alias=_alias("BOT_LOG_LEVEL"),
        description="Logging level (`DEBUG`, `INFO`, `WARNING`, ...).",
    )
    log_format: Literal["text", "json"] = Field(
        default="text", validation_alias=_alias("BOT_LOG_FORMAT"),
        description=(
            "`text`, or `json`: one JSON object per line; a line written while a chat is handled "
            "carries `chat_key`, `session_id`, `run_no` and `trace_id`."
        ),
    )
    otel_endpoint: str | None = Field(
        default=None, validation_alias=_alias("OTEL_EXPORTER_OTLP_ENDPOINT"),
        description=(
            "OpenTelemetry collector's base URL (the standard variable): spans go to its `/v1/traces` "
            "over OTLP/HTTP, batched. Unset (and `BOT_TRACE=off`): no tracer at all. The SDK's own "
            "`OTEL_BSP_*` and `OTEL_TRACES_SAMPLER*` variables apply."
        ),
    )
    otel_service_name: str = Field(
        default="tripbot", min_length=1, validation_alias=_alias("OTEL_SERVICE_NAME"),
        description="The traces' `service.name` (the standard variable).",
    )
    trace: Literal["off", "console"] = Field(
        default="off", validation_alias=_alias("BOT_TRACE"),
        description="`console` prints each span on stdout as it ends (local use); `off`.",
    )

    # live travel data providers (BOT_TRAVEL_DATA=live)
    amap_key: str | None = Field(
        default=None, validation_alias=_alias("AMAP_KEY"),
        description=(
            "Amap (高德) **Web Service** key, with `BOT_TRAVEL_DATA=live`: places and routes in "
            "mainland China, Hong Kong and Macau."
        ),
    )
    searxng_url: str | None = Field(
        default=None, validation_alias=_alias("SEARXNG_URL"),
        description=(
            "A SearXNG instance with `json` in `search.formats`, for `web_search` with live data; "
            "wins over Tavily."
        ),
    )
    tavily_api_key: str | None = Field(
        default=None, validation_alias=_alias("TAVILY_API_KEY"),
        description="Tavily's key, for `web_search` with live data when no SearXNG is set.",
    )
    duffel_token: str | None = Field(
        default=None, validation_alias=_alias("DUFFEL_TOKEN"),
        description="Duffel's access token, for `flight_search` with live data.",
    )
    # base URLs of the live services (tests and self-hosted proxies point them elsewhere)
    amap_base_url: str | None = Field(
        default=None, validation_alias=_alias("AMAP_BASE_URL"),
        description="Amap's base URL (a proxy, or the tests' fake); unset: the real service.",
    )
    tavily_base_url: str | None = Field(
        default=None, validation_alias=_alias("TAVILY_BASE_URL"),
        description="Tavily's base URL; unset: the real service.",
    )
    rail12306_base_url: str | None = Field(
        default=None, validation_alias=_alias("RAIL12306_BASE_URL"),
        description=(
            "Base URL of 12306's public left-ticket query (trains need no key, so live mode always "
            "asks it); unset: the real service."
        ),
    )
    duffel_base_url: str | None = Field(
        default=None, validation_alias=_alias("DUFFEL_BASE_URL"),
        description="Duffel's base URL; unset: the real service.",
    )

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

    @field_validator("openai_base_url", "telegram_api_base_url", "telegram_webhook_url", "slack_api_base_url",
                     "searxng_url", "amap_base_url", "tavily_base_url", "rail12306_base_url", "duffel_base_url",
                     mode="before")
    @classmethod
    def _http_url(cls, v: object, info: ValidationInfo) -> object:
        """`not-a-url` would pass as text and fail later as "connection error": say so now."""
        if isinstance(v, str):
            v = v.strip()
            if not v:  # `OPENAI_BASE_URL=` in .env: unset, the default
                assert info.field_name is not None
                return cls.model_fields[info.field_name].default
            parts = urlsplit(v)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"{v!r} is not an http:// or https:// URL")
        return v

    @field_validator("trace", mode="before")
    @classmethod
    def _trace_off(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip().lower()
            return v if v else "off"
        return v

    @field_validator("fx_rates")
    @classmethod
    def _rates(cls, v: str | None) -> str | None:
        from tools.travel.money import Rates, RatesError

        if v:
            try:
                Rates.parse(v)
            except RatesError as exc:
                raise ValueError(exc.message) from None
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
        if self.db_url and not _installed("asyncpg"):
            out.append(("BOT_DB_URL", _extra("postgres", "PostgreSQL")))
        tracing = "OTEL_EXPORTER_OTLP_ENDPOINT" if self.otel_endpoint else "BOT_TRACE" if self.trace == "console" else ""
        exporter = "opentelemetry.exporter.otlp.proto.http" if self.otel_endpoint else "opentelemetry.sdk"
        if tracing and not (_installed("opentelemetry.sdk") and _installed(exporter)):
            out.append((tracing, _extra("otel", "tracing")))
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
