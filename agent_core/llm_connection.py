"""The LLM client's connection to its endpoint: the openai SDK's client on the SDK's aiohttp
transport (`openai.DefaultAioHttpClient`, the documented `openai[aiohttp]` opt-in), and one
attempt of a request, whole or streamed up to its first chunk.

Why aiohttp: the SDK's default client (httpx2, on anyio) walks its whole connection pool on each
request and on each response's close and parses HTTP in Python; with 50 calls in flight that cost
about a millisecond of CPU a call more (docs/decisions/model-transport.md). The SDK's aiohttp
client misnames some faults; `as_api_error` (agent_core/llm_faults.py) names them back, so an
attempt fails with what the SDK's default client would have raised.

An attempt returns its failure as a value, never raises it (agent_core/llm_retry.py says why).
The aiohttp session opens at the first request, on the event loop that made it: a client serves
one event loop, as the SDK's default client does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx2
import openai
from openai.types.chat import ChatCompletion

from agent_core.llm_config import LLMConfig
from agent_core.llm_faults import MODEL_FAULTS, as_api_error


@dataclass(frozen=True, slots=True)
class Opened:
    """A stream whose first chunk arrived: from here on, nothing is retried."""

    stream: openai.AsyncStream[object]
    first: object


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A stream that opened but whose first chunk was no chunk (or none came): not retried."""

    detail: str


class ModelConnection:
    """The SDK's client of one LLM. Retries are the caller's (typed, transient-only, observed),
    so the SDK's own are off."""

    def __init__(self, config: LLMConfig) -> None:
        self.client = openai.AsyncOpenAI(api_key=config.api_key, base_url=config.base_url,
                                         timeout=config.timeout_s, max_retries=0,
                                         http_client=openai.DefaultAioHttpClient(timeout=config.timeout_s))
        # named in a fault whose aiohttp exception came through the SDK unwrapped
        self._request = httpx2.Request("POST", self.client.base_url.join("chat/completions"))

    async def aclose(self) -> None:
        await self.client.close()

    def fault(self, exc: Exception) -> openai.APIError:
        """One of llm_faults.MODEL_FAULTS, named as the SDK's default client names it."""
        return as_api_error(exc, self._request)

    async def complete(self, body: dict[str, Any]) -> ChatCompletion | openai.APIError:
        """One request for a whole reply."""
        try:
            # The wire dicts are final: the SDK's documented low-level post skips its
            # recursive parameter transform, which cost more CPU than the call.
            return await self.client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        except MODEL_FAULTS as exc:
            return self.fault(exc)

    async def open_stream(self, body: dict[str, Any]) -> Opened | Unreadable | openai.APIError:
        """One streamed request, up to its first chunk (what a retry may repeat)."""
        try:
            # chunks stay the decoded JSON: building a model object per chunk cost about a
            # millisecond each, which 500 streams at once turned into queues (benchmarks/bench_first_token.py)
            stream = await self.client.post("/chat/completions", body=body, cast_to=ChatCompletion, stream=True,
                                            stream_cls=openai.AsyncStream[object])
        except MODEL_FAULTS as exc:
            return self.fault(exc)
        try:
            return Opened(stream, await stream.__anext__())
        except MODEL_FAULTS as exc:
            await stream.close()
            return self.fault(exc)
        except StopAsyncIteration:
            await stream.close()
            return Unreadable("the stream ended before its first chunk")
        except ValueError as exc:
            await stream.close()
            return Unreadable(f"the stream's first chunk is unreadable ({exc})")
