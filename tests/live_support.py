"""Shared pieces of the live-provider tests (tests/test_travel_live*.py): the fake services, an
HTTP client that fails the test if a request leaves 127.0.0.1, and tools built on the live path."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.fakes.live_providers import AMAP_KEY, DUFFEL_TOKEN, TAVILY_KEY, FakeLiveServices
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider
from tools.travel.factory import TravelSettings

SHANGHAI = ZoneInfo("Asia/Shanghai")


def at(text: str) -> datetime:
    """A moment in China time: at("2022-10-27 09:00")."""
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=SHANGHAI)


def live_config(**overrides: Any) -> TravelSettings:
    """Live data with the fakes' keys unless overridden."""
    values: dict[str, Any] = {"travel_data": "live", "amap_key": AMAP_KEY, "tavily_api_key": TAVILY_KEY,
                              "duffel_token": DUFFEL_TOKEN}
    return TravelSettings(**{**values, **overrides})


@pytest.fixture(scope="module")
def world() -> tuple[Gazetteer, SandboxProvider]:
    gaz = Gazetteer.load()
    return gaz, SandboxProvider(gaz)


@pytest.fixture
async def fake() -> AsyncIterator[FakeLiveServices]:
    async with FakeLiveServices() as f:
        yield f


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    hosts: list[str] = []

    async def note(request: httpx.Request) -> None:
        hosts.append(request.url.host)

    async with httpx.AsyncClient(timeout=5.0, event_hooks={"request": [note]}) as client:
        yield client
    assert set(hosts) <= {"127.0.0.1"}, f"a request left 127.0.0.1: {sorted(set(hosts))}"


Build = Callable[..., ToolCollection]


@pytest.fixture
def build(world: tuple[Gazetteer, SandboxProvider], fake: FakeLiveServices, http: httpx.AsyncClient) -> Build:
    """Tools on the live path; `now` is the clock the 12306 provider keeps its sale window by."""

    def make(now: datetime | None = None, **overrides: Any) -> ToolCollection:
        gaz, sb = world
        providers = make_provider(live_config(**overrides), gaz, sb, http=http, endpoints=fake.endpoints(),
                                  clock=(lambda: now) if now else None)
        return ToolCollection(build_travel_tools(gaz, providers))
    return make


async def ok(tools: ToolCollection, name: str, args: dict[str, Any], now: datetime) -> dict[str, Any]:
    result = await tools.execute(name, args, ToolContext("call-1", now))
    assert result.ok, result.error
    return json.loads(result.output)


async def fails(tools: ToolCollection, name: str, args: dict[str, Any], now: datetime) -> str:
    result = await tools.execute(name, args, ToolContext("call-1", now))
    assert not result.ok, result.output[:300]
    assert result.error
    return result.error
