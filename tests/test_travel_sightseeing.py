"""poi_search reads "上海 景点" as a city plus what to find, and generic words list the sights."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from bot.settings import Settings
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider

CTX = ToolContext(tool_call_id="c1", now=datetime(2026, 11, 30, tzinfo=UTC))


@pytest.fixture(scope="module")
def tools() -> ToolCollection:
    gaz = Gazetteer.load()
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    return ToolCollection(build_travel_tools(gaz, make_provider(settings, gaz, SandboxProvider(gaz))))


@pytest.mark.parametrize(
    ("args", "city", "must_include"),
    [
        ({"query": "上海 景点"}, "上海", "外滩"),
        ({"query": "景点", "city": "上海"}, "上海", "东方明珠"),
        ({"query": "sights in Beijing"}, "北京", "故宫博物院"),
        ({"query": "things to do", "city": "Xi'an"}, "西安", "大雁塔"),
    ],
)
async def test_generic_sightseeing_queries_list_the_citys_sights(tools, args, city, must_include):
    result = await tools.execute("poi_search", json.dumps(args, ensure_ascii=False), CTX)
    assert result.ok, result.error
    data = json.loads(result.output)
    names = [r["name"] for r in data["results"]]
    assert len(names) >= 5 and must_include in names
    assert {r["city"] for r in data["results"]} == {city}


async def test_a_name_still_finds_that_place(tools):
    data = json.loads((await tools.execute("poi_search", '{"query": "外滩"}', CTX)).output)
    assert data["results"][0]["name"] == "外滩"
