"""Seeing what the bot does: its logs and its traces."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from bot.settings.fields import SettingsGroup, alias


class ObserveSettings(SettingsGroup):
    section = "Logs and traces"

    log_level: str = Field(
        default="INFO", validation_alias=alias("BOT_LOG_LEVEL"),
        description="Logging level (`DEBUG`, `INFO`, `WARNING`, ...).",
    )
    log_format: Literal["text", "json"] = Field(
        default="text", validation_alias=alias("BOT_LOG_FORMAT"),
        description=(
            "`text`, or `json`: one JSON object per line; a line written while a chat is handled "
            "carries `chat_key`, `session_id`, `run_no` and `trace_id`."
        ),
    )
    otel_endpoint: str | None = Field(
        default=None, validation_alias=alias("OTEL_EXPORTER_OTLP_ENDPOINT"),
        description=(
            "OpenTelemetry collector's base URL (the standard variable): spans go to its `/v1/traces` "
            "over OTLP/HTTP, batched. Unset (and `BOT_TRACE=off`): no tracer at all. The SDK's own "
            "`OTEL_BSP_*` and `OTEL_TRACES_SAMPLER*` variables apply."
        ),
    )
    otel_service_name: str = Field(
        default="tripbot", min_length=1, validation_alias=alias("OTEL_SERVICE_NAME"),
        description="The traces' `service.name` (the standard variable).",
    )
    trace: Literal["off", "console"] = Field(
        default="off", validation_alias=alias("BOT_TRACE"),
        description="`console` prints each span on stdout as it ends (local use); `off`.",
    )

    @field_validator("trace", mode="before")
    @classmethod
    def _trace_off(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip().lower()
            return v if v else "off"
        return v
