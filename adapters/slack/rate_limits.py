"""Slack's pacing on our clock: BOT_PLATFORM_TIME_SCALE (1.0 for the real service) says how long
one of Slack's seconds lasts here, for the edit and stream intervals and for the wait a 429's
`Retry-After` asks for. At 1.0 the SDK's own retry handler does the waiting, unchanged."""

from __future__ import annotations

import asyncio
import random

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState


def rate_limit_retries(max_retry_count: int, time_scale: float) -> AsyncRetryHandler:
    if time_scale == 1.0:
        return AsyncRateLimitErrorRetryHandler(max_retry_count=max_retry_count)
    return ScaledRateLimitRetryHandler(max_retry_count, time_scale)


class ScaledRateLimitRetryHandler(AsyncRateLimitErrorRetryHandler):
    """The SDK's handler (Retry-After's whole seconds plus up to one second of jitter), each of
    those seconds `time_scale` long."""

    def __init__(self, max_retry_count: int, time_scale: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.time_scale = time_scale

    async def prepare_for_next_attempt_async(
        self, *, state: RetryState, request: HttpRequest, response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> None:
        if response is None:
            raise error or RuntimeError("a rate-limit retry without a response")
        state.next_attempt_requested = True
        header = next((v for k, v in response.headers.items() if k.lower() == "retry-after"), None)
        seconds = int(header[0]) if header else 1
        await asyncio.sleep((seconds + random.random()) * self.time_scale)
        state.increment_current_attempt()
