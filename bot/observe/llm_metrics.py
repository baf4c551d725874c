"""Feeds the LLM client's observer hooks into Prometheus metrics."""

from __future__ import annotations

from bot.observe.metrics import Metrics


class LLMMetrics:
    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def on_call(self, seconds: float, prompt_tokens: int, completion_tokens: int) -> None:
        self.metrics.llm_seconds.observe(seconds)
        self.metrics.llm_tokens.labels("prompt").inc(prompt_tokens)
        self.metrics.llm_tokens.labels("completion").inc(completion_tokens)

    def on_error(self, kind: str) -> None:
        self.metrics.llm_errors.labels(kind).inc()
