"""A small Server-Sent Events reader for the web chat tests and the fan-out benchmark."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True, slots=True)
class SseEvent:
    event: str
    data: str
    id: str | None
    comment: str | None = None  # set for comment lines (keep-alives), which carry no event

    def json(self) -> Any:
        return json.loads(self.data)


async def iter_sse(response: httpx.Response) -> AsyncIterator[SseEvent]:
    event, data, event_id = "message", [], None
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield SseEvent(event, "\n".join(data), event_id)
            event, data, event_id = "message", [], None
        elif line.startswith(":"):
            yield SseEvent("", "", None, comment=line[1:].strip())
        else:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
            elif field == "id":
                event_id = value


class SseReader:
    """Reads one open SSE response; `next()` and `until()` wait with a timeout, never forever."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self._it = iter_sse(response)
        self.seen: list[SseEvent] = []
        self.comments: list[str] = []

    async def next(self, within: float = 5.0) -> SseEvent:
        while True:
            item = await asyncio.wait_for(anext(self._it), within)
            if item.comment is not None:
                self.comments.append(item.comment)
                continue
            self.seen.append(item)
            return item

    async def until(self, event: str, within: float = 5.0) -> SseEvent:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            item = await self.next(max(0.01, deadline - loop.time()))
            if item.event == event:
                return item

    async def comment(self, within: float = 5.0) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        start = len(self.comments)
        while len(self.comments) == start:
            item = await asyncio.wait_for(anext(self._it), max(0.01, deadline - loop.time()))
            if item.comment is not None:
                self.comments.append(item.comment)
            else:
                self.seen.append(item)
        return self.comments[-1]
