"""What the LLM client is configured with, and what it knows about model names: context
windows it is sure of, which models see images, which refuse `max_tokens` and `temperature`."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

# Longest matching prefix wins. Only for models whose window we are sure of; anything else
# uses LLMConfig.context_tokens.
KNOWN_CONTEXT_WINDOWS: dict[str, int] = {
    "gpt-3.5-turbo": 16_385,
    "gpt-4": 8_192,
    "gpt-4-turbo": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "deepseek-chat": 128_000,
    "deepseek-reasoner": 128_000,
}
_VISION_HINTS = ("gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-5", "o1", "o3", "o4", "vision", "-vl", "vl-",
                 "llava", "pixtral", "claude-3", "gemini")
# OpenAI's reasoning models refuse `max_tokens` and `temperature`.
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def known_context_window(model: str) -> int | None:
    name = model.lower().rsplit("/", 1)[-1]
    best = max((p for p in KNOWN_CONTEXT_WINDOWS if name.startswith(p)), key=len, default=None)
    return KNOWN_CONTEXT_WINDOWS[best] if best else None


def guess_vision(model: str) -> bool:
    name = model.lower()
    return any(hint in name for hint in _VISION_HINTS)


class LLMConfig(BaseModel):
    model: str
    api_key: str
    base_url: str | None = None
    context_tokens: int = Field(default=128_000, gt=0, description="window of models not in the known table")
    max_tokens: int = Field(default=4096, gt=0, description="reserved for the reply")
    temperature: float | None = 0.0
    timeout_s: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=4, ge=0, description="retries after the first attempt")
    vision: bool | None = Field(default=None, description="None: guessed from the model name")
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_cap_s: float = Field(default=30.0, ge=0)
    retry_after_cap_s: float = Field(default=60.0, ge=0, description="longest Retry-After we obey")
    stream: bool = Field(default=True, description="False: every reply is asked for whole (endpoints that "
                                                    "cannot stream tool calls)")

    @model_validator(mode="after")
    def _resolve_vision(self) -> LLMConfig:
        if self.vision is None:
            self.vision = guess_vision(self.model)
        return self

    @property
    def context_window(self) -> int:
        return known_context_window(self.model) or self.context_tokens


def is_reasoning_model(model: str) -> bool:
    return model.lower().rsplit("/", 1)[-1].startswith(_REASONING_PREFIXES)
