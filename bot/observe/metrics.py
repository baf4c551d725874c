"""Prometheus metrics on a registry owned by the runtime (no process-global registry).

Counters and histograms count where things happen; the gauges of what is waiting (questions,
parked sessions, outbox rows) are read from the store when /metrics is scraped, so they are
never wrong by a missed decrement.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST


class Metrics:
    content_type = CONTENT_TYPE_LATEST

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.runs = Counter("bot_runs", "Agent runs by outcome", ["outcome"], registry=r)
        self.steps = Counter("bot_steps", "Agent steps taken", registry=r)
        self.tool_calls = Counter("bot_tool_calls", "Tool calls by tool and result", ["tool", "ok"], registry=r)
        self.questions_waiting = Gauge("bot_questions_waiting", "Questions waiting for an answer", registry=r)
        self.sessions_parked = Gauge(
            "bot_sessions_parked", "Sessions paused on a question (nothing of them held in memory)", registry=r
        )
        self.outbox_pending = Gauge("bot_outbox_pending", "Outbox rows not yet delivered", registry=r)
        self.outbox_failed = Gauge("bot_outbox_failed", "Outbox rows given up on (see /status and the log)", registry=r)
        self.deliveries = Counter("bot_deliveries", "Outbox rows by kind and outcome", ["kind", "outcome"], registry=r)
        self.delivery_retries = Counter("bot_delivery_retries", "Failed delivery attempts by kind", ["kind"], registry=r)
        self.platform_unreachable = Gauge(
            "bot_platform_unreachable", "1 while a platform's deliveries wait for it to come back (an outage)",
            ["platform"], registry=r,
        )
        self.delivery_waiting_chats = Gauge(
            "bot_delivery_waiting_chats", "Chats whose next delivery waits for its platform to come back",
            ["platform"], registry=r,
        )
        self.inbox_set_aside = Counter("bot_inbox_set_aside", "Inbox rows set aside after repeated failures", registry=r)
        self.llm_tokens = Counter("bot_llm_tokens", "LLM tokens by kind", ["kind"], registry=r)
        self.llm_errors = Counter("bot_llm_errors", "LLM errors by kind", ["kind"], registry=r)
        self.llm_cost = Counter(
            "bot_llm_cost_usd", "What model calls cost (USD, at BOT_LLM_PRICES) by platform and model",
            ["platform", "model"], registry=r,
        )
        self.chat_tokens = Counter(
            "bot_chat_llm_tokens", "Model tokens of chats' runs by platform, model and kind", ["platform", "model", "kind"],
            registry=r,
        )
        self.feedback = Counter(
            "bot_plan_feedback", "👍 / 👎 presses under plans by platform and rating (up, down; refused: no such run)",
            ["platform", "rating"], registry=r,
        )
        self.messages_in = Counter("bot_messages_in", "Incoming messages by platform and outcome", ["platform", "outcome"], registry=r)
        self.step_seconds = Histogram(
            "bot_step_seconds", "Wall time of one agent step", registry=r,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.llm_seconds = Histogram(
            "bot_llm_seconds", "Wall time of one model call", registry=r,
            buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
        )
        self.run_seconds = Histogram(
            "bot_run_seconds", "Wall time of one run segment (start or resume to pause or end)", registry=r,
            buckets=(0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
        )

        self._refreshers: list[Callable[[Metrics], Awaitable[None]]] = []

    def count_cost(self, platform: str, model: str, prompt_tokens: int, completion_tokens: int, cost_usd: float) -> None:
        self.llm_cost.labels(platform, model).inc(cost_usd)
        self.chat_tokens.labels(platform, model, "prompt").inc(prompt_tokens)
        self.chat_tokens.labels(platform, model, "completion").inc(completion_tokens)

    def refresh_with(self, refresher: Callable[[Metrics], Awaitable[None]]) -> None:
        """Run `refresher` before every scrape (it sets the gauges read from the store)."""
        self._refreshers.append(refresher)

    async def refresh(self) -> None:
        for refresher in self._refreshers:
            await refresher(self)

    def render(self) -> bytes:
        return generate_latest(self.registry)
