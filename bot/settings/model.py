"""The model the agent and the Validator ask, and whether the Validator grades answers."""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from bot.settings.fields import SettingsGroup, alias, http_url


class ModelSettings(SettingsGroup):
    section = "The model"

    openai_api_key: str | None = Field(
        default=None, validation_alias=alias("OPENAI_API_KEY"),
        description=(
            "Key of any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, vLLM, Ollama). Unset: the "
            "rule-based offline planner answers instead of a model."
        ),
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias=alias("OPENAI_BASE_URL"),
        description="Base URL of that endpoint; unset means OpenAI's own.",
    )
    llm_model: str = Field(
        default="gpt-4o-mini", validation_alias=alias("BOT_LLM_MODEL"),
        description="The model the agent and the Validator ask.",
    )
    llm_context_tokens: int = Field(
        default=128000, gt=0, validation_alias=alias("BOT_LLM_CONTEXT_TOKENS"),
        description=(
            "Context window assumed for a model the bot does not know; requests are checked against "
            "it before they are sent."
        ),
    )
    llm_timeout_s: float = Field(
        default=60.0, gt=0, validation_alias=alias("BOT_LLM_TIMEOUT_S"),
        description="Timeout of one model request, in seconds.",
    )
    llm_max_retries: int = Field(
        default=4, ge=0, validation_alias=alias("BOT_LLM_MAX_RETRIES"),
        description=(
            "Retries of a model call's transient faults (connection, timeout, 429, 5xx; `Retry-After` "
            "obeyed up to 60 s). Never for 400/401/403 or an overflowing context."
        ),
    )
    llm_stream: bool = Field(
        default=True, validation_alias=alias("BOT_LLM_STREAM"),
        description=(
            "Ask the model for streamed replies, so answers appear as they are written. `false` for "
            "an endpoint that cannot stream tool calls: answers then appear whole; steps and Stop "
            "work as before."
        ),
    )
    llm_prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, validation_alias=alias("BOT_LLM_PRICES"),
        description=(
            'What model calls cost, as JSON `{"model": [input, output]}` in US dollars per million '
            "tokens, over the built-in list prices of common models. A dated name "
            "(`gpt-4o-mini-2024-07-18`) takes the price of the longest known name it starts with; an "
            "unknown model counts 0 (said once in the log)."
        ),
    )

    @field_validator("openai_base_url", mode="before")
    @classmethod
    def _model_url(cls, v: object, info: ValidationInfo) -> object:
        return http_url(cls, v, info)

    @property
    def offline_model(self) -> bool:
        return not self.openai_api_key


class ValidatorSettings(SettingsGroup):
    section = "The Validator"

    validate_plans: bool = Field(
        default=True, validation_alias=alias("BOT_VALIDATE"),
        description="Grade answers with the Validator before they are posted (`on`/`off`).",
    )
    validate_rounds: int = Field(
        default=2, ge=0, le=5, validation_alias=alias("BOT_VALIDATE_ROUNDS"),
        description=(
            "Re-plan rounds when the Validator is not satisfied, before the plan is posted with its "
            "problems stated."
        ),
    )

    @field_validator("validate_plans", mode="before")
    @classmethod
    def _on_off(cls, v: object) -> object:
        if isinstance(v, str) and v.strip().lower() in {"on", "yes"}:
            return True
        if isinstance(v, str) and v.strip().lower() in {"off", "no"}:
            return False
        return v
