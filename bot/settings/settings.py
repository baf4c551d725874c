"""Settings: every group of settings in one object, read from the environment and `.env`, and the
checks of settings that are each valid but do not fit together.

The entry point builds one Settings and passes it down; everything reads its fields flat
(`settings.llm_model`, `settings.db_url`), whichever group declares them.
"""

from __future__ import annotations

import importlib.util

from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.settings.access import AccessSettings
from bot.settings.conversations import ConversationSettings, TeamSettings
from bot.settings.delivery import DeliverySettings
from bot.settings.fields import SettingsGroup
from bot.settings.model import ModelSettings, ValidatorSettings
from bot.settings.observe import ObserveSettings
from bot.settings.platforms import SlackSettings, TelegramSettings
from bot.settings.store import StoreSettings
from bot.settings.travel import TravelSettings


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package of a dotted name is missing
        return False


def _extra(name: str, what: str) -> str:
    return f"{what} needs the [{name}] extra, which is not installed: pip install 'travel-agent-bot[{name}]'"


# The groups in the order of the configuration reference's sections (scripts/docs_gen.py).
class Settings(
    ModelSettings, TelegramSettings, SlackSettings, StoreSettings, AccessSettings, ConversationSettings,
    TeamSettings, ValidatorSettings, DeliverySettings, ObserveSettings, TravelSettings, BaseSettings,
):
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

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


def _field_default(name: str) -> object:
    return Settings.model_fields[name].default


GROUPS: tuple[type[SettingsGroup], ...] = tuple(b for b in Settings.__bases__ if issubclass(b, SettingsGroup))
