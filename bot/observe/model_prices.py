"""What model calls cost: a price table per model, in US dollars per million tokens.

The defaults are list prices of common models when this was written; providers change them and
discounts differ, so BOT_LLM_PRICES (JSON, `{"model": [input, output]}` per million tokens)
overrides or adds entries. A model the table does not know costs 0 here and says so once in the
log: its tokens are still counted.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ModelPrice:
    input_per_mtok: float  # USD per million prompt tokens
    output_per_mtok: float  # USD per million completion tokens

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1_000_000


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "offline-planner": ModelPrice(0.0, 0.0),
    "gpt-4o-mini": ModelPrice(0.15, 0.60),
    "gpt-4o": ModelPrice(2.50, 10.00),
    "gpt-4.1": ModelPrice(2.00, 8.00),
    "gpt-4.1-mini": ModelPrice(0.40, 1.60),
    "gpt-4.1-nano": ModelPrice(0.10, 0.40),
    "gpt-5": ModelPrice(1.25, 10.00),
    "gpt-5-mini": ModelPrice(0.25, 2.00),
    "gpt-5-nano": ModelPrice(0.05, 0.40),
    "o3-mini": ModelPrice(1.10, 4.40),
    "o4-mini": ModelPrice(1.10, 4.40),
    "deepseek-chat": ModelPrice(0.27, 1.10),
    "deepseek-reasoner": ModelPrice(0.55, 2.19),
    "qwen-turbo": ModelPrice(0.05, 0.20),
    "qwen-plus": ModelPrice(0.40, 1.20),
    "qwen-max": ModelPrice(1.60, 6.40),
}


class PriceTable:
    """Prices by model name. A dated or suffixed name (`gpt-4o-mini-2024-07-18`) takes the price
    of the longest known name it starts with."""

    def __init__(self, overrides: Mapping[str, tuple[float, float]] | None = None,
                 defaults: Mapping[str, ModelPrice] = DEFAULT_PRICES) -> None:
        self._prices = dict(defaults)
        for model, (inp, out) in (overrides or {}).items():
            self._prices[model] = ModelPrice(inp, out)
        self._unknown_said: set[str] = set()  # models already named in the log as unpriced

    def price_of(self, model: str) -> ModelPrice | None:
        if model in self._prices:
            return self._prices[model]
        known = [name for name in self._prices if model.startswith(name)]
        return self._prices[max(known, key=len)] if known else None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.price_of(model)
        if price is None:
            if model not in self._unknown_said:
                self._unknown_said.add(model)
                log.warning("no price for model %r: its calls are counted at 0 (set BOT_LLM_PRICES)", model)
            return 0.0
        return price.cost(prompt_tokens, completion_tokens)
