"""Bad input from every live provider, as the issue lists it: an HTML page, a truncated JSON, a
redirect loop, a 200 with an error inside, a price of "--". Each is a clear tool error or a note
to the model, and the run goes on with the other tools. (12306's own kinds of each are in
test_travel_live_rail.py: its HTML page, 302 to error.html, c_url loop and 非法请求.)"""

# ruff: noqa: F811  (the fixtures imported from tests.live_support are named again as parameters)
from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.live_providers import DUFFEL_EXAMPLE_DAY, FakeLiveServices, duffel_example
from tests.live_support import Build, at, build, fails, fake, http, ok, world  # noqa: F401 (pytest fixtures)
from tools.base import ToolContext

NOW = at("2025-04-20 10:00")
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "amap": ("poi_search", {"query": "故宫", "city": "北京"}),
    "searxng": ("web_search", {"query": "故宫 预约"}),
    "tavily": ("web_search", {"query": "故宫 预约"}),
    "duffel": ("flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": "2025-05-01"}),
}
LABELS = {"amap": "Amap", "searxng": "SearXNG", "tavily": "Tavily", "duffel": "Duffel"}


def tools_for(build: Build, fake: FakeLiveServices, service: str) -> Any:
    return build(NOW, searxng_url=fake.searxng_url if service == "searxng" else None)


@pytest.mark.parametrize("service", sorted(CALLS))
@pytest.mark.parametrize(("mode", "words"), [
    ("page", "not JSON (an HTML page) (HTTP 200)"),
    ("malformed", "not JSON (HTTP 200)"),
    ("redirect_loop", "redirected the request (HTTP 302 to "),
])
async def test_a_provider_answering_garbage_is_a_clear_error(build: Build, fake: FakeLiveServices, service: str,
                                                             mode: str, words: str) -> None:
    fake.mode[service] = mode
    name, args = CALLS[service]
    message = await fails(tools_for(build, fake, service), name, args, NOW)
    assert words in message and LABELS[service] in message, message
    assert fake.count(service) >= 1 and fake.count(service) <= 4  # asked, not looped on


@pytest.mark.parametrize("service", sorted(CALLS))
async def test_the_run_goes_on_with_the_other_tools(build: Build, fake: FakeLiveServices, service: str) -> None:
    fake.mode[service] = "page"
    tools = tools_for(build, fake, service)
    name = CALLS[service][0]
    ctx = ToolContext("call-1", NOW)
    outcomes = {n: (await tools.execute(n, a, ctx)).ok for n, a in CALLS.values()}
    assert outcomes[name] is False
    assert [n for n, good in outcomes.items() if not good] == [name]


async def test_a_200_with_an_error_inside_is_the_services_own_words(build: Build, fake: FakeLiveServices) -> None:
    fake.mode["amap"] = "quota"  # Amap answers HTTP 200 with status "0" and its infocode
    assert "DAILY_QUERY_OVER_LIMIT" in await fails(build(NOW), "poi_search", {"query": "故宫", "city": "北京"}, NOW)


async def test_a_price_of_dashes_is_a_note_not_a_fare(build: Build, fake: FakeLiveServices) -> None:
    fake.duffel_answers["LHR-JFK"] = duffel_example(more_offers=True)
    now = at("2020-06-01 10:00")
    out = await ok(build(now), "flight_search", {"departure_city_name": "伦敦", "arrival_city_name": "纽约",
                                                 "depart_date": DUFFEL_EXAMPLE_DAY, "departure_airport_name": "LHR",
                                                 "arrival_airport_name": "JFK"}, now)
    assert "BA1236" not in json.dumps(out)
    assert any("1 Duffel offer(s) came without a usable price ('--')" in c for c in out["caveats"])
