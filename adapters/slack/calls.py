"""Every Web API call of the Slack surface: one typed slack-sdk call awaited, its failure made a
SlackCallFailed naming the method; and calls nobody waits for, run in the background."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_slack_response import AsyncSlackResponse

from adapters.slack.errors import SlackCallFailed

log = logging.getLogger(__name__)


class SlackCalls:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    async def __call__(self, method: str, call: Awaitable[AsyncSlackResponse]) -> dict[str, Any]:
        """Await one typed call (`client.chat_postMessage(...)` and friends); its failures become
        SlackCallFailed naming `method`."""
        try:
            resp = await call
        except SlackApiError as exc:
            raise SlackCallFailed(method, str(exc.response.get("error", exc.response.status_code)),
                                  outage=exc.response.status_code >= 500) from None
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SlackCallFailed(method, f"{type(exc).__name__}: {exc}", outage=True) from None
        return dict(resp.data) if isinstance(resp.data, dict) else {}

    def spawn(self, coro: Coroutine[Any, Any, Any], *, quiet: bool = False) -> None:
        """Run `coro` in the background; a failed call is logged (at debug level when `quiet`)."""
        async def guarded() -> None:
            try:
                await coro
            except SlackCallFailed as exc:
                (log.debug if quiet else log.warning)("slack: %s", exc)

        task = asyncio.create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
