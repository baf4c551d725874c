"""The LLM client's connection to its endpoint: the openai SDK's own client, and one attempt
of a request, whole or streamed up to its first chunk.

The SDK's own HTTP client: an aiohttp transport of ours saved about 1 ms of CPU per call with 50
in flight, on calls that take one to thirty seconds; not worth a module.

An attempt returns its failure as a value, never raises it (agent_core/llm_retry.py says why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from agent_core.llm_config import LLMConfig


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
                                         timeout=config.timeout_s, max_retries=0)

    async def aclose(self) -> None:
        await self.client.close()

    async def complete(self, body: dict[str, Any]) -> ChatCompletion | openai.APIError:
        """One request for a whole reply."""
        try:
            # The wire dicts are final: the SDK's documented low-level post skips its
            # recursive parameter transform, which cost more CPU than the call.
            return await self.client.post("/chat/completions", body=body, cast_to=ChatCompletion)
        except openai.APIError as exc:
            return exc

    async def open_stream(self, body: dict[str, Any]) -> Opened | Unreadable | openai.APIError:
        """One streamed request, up to its first chunk (what a retry may repeat)."""
        try:
            # chunks stay the decoded JSON: building a model object per chunk cost about a
            # millisecond each, which 500 streams at once turned into queues (benchmarks/bench_first_token.py)
            stream = await self.client.post("/chat/completions", body=body, cast_to=ChatCompletion, stream=True,
                                            stream_cls=openai.AsyncStream[object])
        except openai.APIError as exc:
            return exc
        try:
            return Opened(stream, await stream.__anext__())
        except openai.APIError as exc:
            await stream.close()
            return exc
        except StopAsyncIteration:
            await stream.close()
            return Unreadable("the stream ended before its first chunk")
        except ValueError as exc:
            await stream.close()
            return Unreadable(f"the stream's first chunk is unreadable ({exc})")
