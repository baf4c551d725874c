"""Retry rules of the LLM client: transient faults are retried, everything else surfaces at once, typed."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import pytest

from agent_core.errors import LLMRequestRejected, LLMUnavailable, TokenLimitExceeded
from agent_core.llm import LLM
from agent_core.llm_config import LLMConfig
from agent_core.model import TokenUsage
from agent_core.schema import Message
from tests.fakes.openai_server import FakeOpenAI, drop, fault, hang, reply

HELLO = [Message.user("hello")]


@dataclass
class Recorder:
    calls: list[tuple[float, int, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def on_call(self, seconds: float, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls.append((seconds, prompt_tokens, completion_tokens))

    def on_error(self, kind: str) -> None:
        self.errors.append(kind)


@pytest.fixture
def make_llm(closing: AsyncExitStack) -> Callable[..., LLM]:
    """Builds LLMs against a fake; each is closed (its connections with it) after the test."""
    def make(fake: FakeOpenAI, observer: Recorder | None = None, api_key: str = "sk-test", **overrides: Any) -> LLM:
        settings: dict[str, Any] = {"timeout_s": 5.0, "max_retries": 3, "backoff_base_s": 0.01, "backoff_cap_s": 0.02}
        settings.update(overrides)
        llm = LLM(LLMConfig(model="test-model", api_key=api_key, base_url=fake.base_url, **settings), observer=observer)
        closing.push_async_callback(llm.aclose)
        return llm

    return make


def gaps(fake: FakeOpenAI) -> list[float]:
    times = [r.received_at for r in fake.requests]
    return [b - a for a, b in pairwise(times)]


async def test_429_retry_after_is_honoured(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(429, retry_after=0.4), reply("ok")]) as fake:
        rec = Recorder()
        usage = TokenUsage()
        assert await make_llm(fake, rec).ask(HELLO, usage=usage) == "ok"
        assert len(fake.requests) == 2
        (gap,) = gaps(fake)
        assert 0.38 <= gap < 1.5, gap  # the backoff alone would be ~0.01-0.03 s
        assert rec.errors == ["rate_limit"] and len(rec.calls) == 1
        assert usage.calls == 1 and usage.errors == 0


async def test_retry_after_ms_header_is_honoured(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(429, retry_after_ms=250), reply("ok")]) as fake:
        assert await make_llm(fake).ask(HELLO) == "ok"
        (gap,) = gaps(fake)
        assert 0.23 <= gap < 1.2, gap


async def test_retry_after_is_capped(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(429, retry_after=3600), reply("ok")]) as fake:
        assert await make_llm(fake, retry_after_cap_s=0.05).ask(HELLO) == "ok"
        assert gaps(fake)[0] < 1.0


@pytest.mark.parametrize(
    ("first", "kind"),
    [(fault(500), "server"), (fault(503), "server"), (drop(), "connection"), (hang(), "timeout")],
    ids=["500", "503", "dropped-connection", "timeout"],
)
async def test_transient_faults_are_retried(first: Any, kind: str, make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([first, reply("recovered")]) as fake:
        rec = Recorder()
        llm = make_llm(fake, rec, timeout_s=0.3)
        assert await llm.ask(HELLO) == "recovered"
        assert len(fake.requests) == 2
        assert rec.errors == [kind]
        fake.assert_complete()


async def test_backoff_grows_between_attempts(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(500), fault(500), fault(500), reply("ok")]) as fake:
        assert await make_llm(fake, backoff_base_s=0.05, backoff_cap_s=5.0).ask(HELLO) == "ok"
        g = gaps(fake)
        # exponential 0.05 * 2^n plus up to 0.05 jitter: 0.05-0.1, 0.1-0.15, 0.2-0.25
        assert g[0] >= 0.045 and g[2] >= 0.19 and g[2] > g[0], g


async def test_transient_faults_outliving_the_retries_surface_as_llm_unavailable(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(503)] * 3) as fake:
        rec = Recorder()
        usage = TokenUsage()
        with pytest.raises(LLMUnavailable) as info:
            await make_llm(fake, rec, max_retries=2).ask(HELLO, usage=usage)
        assert type(info.value) is LLMUnavailable  # the typed error, not a retry library's wrapper
        assert info.value.attempts == 3 and info.value.status_code == 503
        assert len(fake.requests) == 3
        assert rec.errors == ["server", "server", "server", "unavailable"]
        assert usage.errors == 1 and usage.calls == 0


async def test_endpoint_down_is_llm_unavailable(closing: AsyncExitStack) -> None:
    async with FakeOpenAI() as fake:
        base_url = fake.base_url
    # the server is gone: every attempt is refused
    llm = LLM(LLMConfig(model="m", api_key="k", base_url=base_url, max_retries=1, backoff_base_s=0.01))
    closing.push_async_callback(llm.aclose)
    with pytest.raises(LLMUnavailable) as info:
        await llm.ask(HELLO)
    assert info.value.attempts == 2 and info.value.status_code is None


@pytest.mark.parametrize("status", [400, 403, 404, 422])
async def test_client_errors_are_not_retried(status: int, make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([fault(status, message="nope"), reply("never")]) as fake:
        rec = Recorder()
        with pytest.raises(LLMRequestRejected) as info:
            await make_llm(fake, rec).ask(HELLO)
        assert info.value.status_code == status and info.value.detail == "nope"
        assert len(fake.requests) == 1
        assert rec.errors == ["rejected"]


async def test_bad_api_key_is_401_and_not_retried(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("never")], api_key="sk-right") as fake:
        with pytest.raises(LLMRequestRejected) as info:
            await make_llm(fake, api_key="sk-wrong").ask(HELLO)
        assert info.value.status_code == 401
        assert len(fake.requests) == 1 and fake.requests[0].status == 401


async def test_server_side_context_overflow_is_token_limit_and_not_retried(make_llm: Callable[..., LLM]) -> None:
    async with FakeOpenAI([reply("never")], context_limit=50) as fake:
        usage = TokenUsage()
        with pytest.raises(TokenLimitExceeded) as info:
            await make_llm(fake).ask([Message.user("a long message " * 40)], usage=usage)
        assert info.value.limit == 50 and info.value.needed > 50
        assert len(fake.requests) == 1 and fake.requests[0].error is not None
        assert fake.requests[0].error["error"]["code"] == "context_length_exceeded"
        assert usage.errors == 1


async def test_one_retry_policy_serves_concurrent_calls(make_llm: Callable[..., LLM]) -> None:
    """The client's single long-lived retry object is shared by every call: concurrent calls
    keep their own attempts, waits and outcomes."""
    import asyncio

    script = [fault(503) for _ in range(10)] + [reply("ok") for _ in range(10)]
    async with FakeOpenAI(script) as fake:
        rec = Recorder()
        llm = make_llm(fake, rec, max_retries=1)
        answers = await asyncio.gather(*(llm.ask(HELLO) for _ in range(10)))
        assert answers == ["ok"] * 10
        assert rec.errors == ["server"] * 10 and len(rec.calls) == 10
        fake.assert_complete()
