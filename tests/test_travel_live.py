"""Amap, SearXNG, Tavily and Duffel on the live path against a local fake (tests/fakes/live_providers.py)
that answers with captured bodies where one exists (tests/fixtures/providers/, SOURCES.md): results
parsed through the real tools, every error a clear tool error, the sandbox fallback visible, and no
request leaving 127.0.0.1. 12306 is in test_travel_live_rail.py."""

# ruff: noqa: F811  (the fixtures imported from tests.live_support are named again as parameters)
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx
import pytest

from tests.fakes.live_providers import (
    AMAP_KEY,
    DUFFEL_EXAMPLE_DAY,
    DUFFEL_TOKEN,
    FakeLiveServices,
    duffel_example,
    fixture,
)
from tests.live_support import at, build, fake, http, live_config, world  # noqa: F401 (pytest fixtures)
from tests.live_support import fails as _fails
from tests.live_support import ok as _ok
from tools.collection import ToolCollection
from tools.errors import ProviderError
from tools.plan import TripPlan
from tools.travel import make_provider
from tools.travel.factory import TravelSettings
from tools.travel.live import AmapProvider, DuffelFlights, LiveEndpoints
from tools.travel.money import Rates, RatesError
from tools.travel.provider import FlightQuery

NOW = at("2025-04-20 10:00")
DAY = "2025-05-01"


async def ok(tools: ToolCollection, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return await _ok(tools, name, args, NOW)


async def fails(tools: ToolCollection, name: str, args: dict[str, Any]) -> str:
    return await _fails(tools, name, args, NOW)


# ------------------------------------------------------------------------------------ Amap

async def test_poi_search_parses_amap_places(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(), "poi_search", {"query": "故宫", "city": "北京"})
    assert out["source"] == "amap" and "Amap" in out["note"]
    first, _, cafe = out["results"]
    assert first["poi_id"] == "B000A8UIN8" and first["name"] == "故宫博物院" and first["city"] == "北京市"
    assert first["ticket_price"] == 60.0 and first["currency"] == "CNY" and first["opening_hours"].startswith("08:30-17:00")
    assert first["category"] == "世界遗产" and first["address"] == "东城区景山前街4号"
    assert abs(first["lat"] - 39.9227) < 0.002 and abs(first["lon"] - 116.3972) < 0.002  # GCJ-02 -> WGS-84
    assert cafe["address"] == "东城区" and "ticket_price" not in cafe  # Amap's [] for empty fields
    (_, _, path, query), = fake.requests
    assert path == "/amap/v3/place/text" and query["key"] == AMAP_KEY
    assert query["city"] == "北京" and query["citylimit"] == "true" and query["keywords"] == "故宫"


async def test_poi_around_sends_gcj_location(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(), "poi_around_search", {"location": "故宫", "keyword": "餐厅", "radius": 1000})
    assert [(r["poi_id"], r["distance_m"]) for r in out["results"]] == [("B0FFFAB6J2", 236), ("B000A7BD6C", 812)]
    query = fake.requests[0][3]
    lng, lat = (float(x) for x in query["location"].split(","))
    assert 116.402 < lng < 116.405 and 39.917 < lat < 39.919  # shifted into GCJ-02
    assert query["radius"] == "1000" and query["sortrule"] == "distance"


async def test_route_plan_driving_taxi_and_transit(build: Any, fake: FakeLiveServices) -> None:
    """On Amap's real answers: a driving route asked in full form (its taxi fare is a float string,
    "39.76049999999999") and a transit route through three subway lines that gives no fare."""
    out = await ok(build(), "route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"})
    modes = {m["mode"]: m for m in out["results"][0]["modes"]}
    assert set(modes) == {"taxi", "drive", "transit"}  # more than 3 km: no walking request
    assert (modes["taxi"]["cost"], modes["taxi"]["currency"]) == (40, "CNY")
    assert modes["taxi"]["distance_km"] == 14.6 and modes["taxi"]["duration_min"] == 52
    assert modes["transit"]["duration_min"] == 59 and modes["transit"]["distance_km"] == 17.3
    assert modes["transit"]["note"].startswith("地铁14号线(善各庄--张郭庄) -> 地铁3号线(东坝北--东四十条) -> 地铁2号线内环")
    assert modes["transit"]["cost"] == 0.0 and "no fare given" in modes["transit"]["note"]
    assert any("no fare for the transit route" in c for c in out["caveats"])
    driving = next(r[3] for r in fake.requests if r[2] == "/amap/v3/direction/driving")
    assert driving["extensions"] == "all"  # the taxi fare is only in the full answer


async def test_a_driving_answer_without_a_fare_says_so(build: Any, fake: FakeLiveServices, world: Any,
                                                       http: httpx.AsyncClient) -> None:
    gaz = world[0]
    answer = fixture("amap/driving_all_2015-12-07.json")
    answer["route"]["taxi_cost"] = "--"
    from tools.travel.live import amap_models as m
    modes = AmapProvider._drive_modes(m.DriveAnswer.model_validate(answer))
    assert [x.mode for x in modes] == ["drive"]
    answer["route"]["taxi_cost"] = []  # Amap's empty value
    assert [x.mode for x in AmapProvider._drive_modes(m.DriveAnswer.model_validate(answer))] == ["drive"]
    assert gaz is not None


async def test_short_route_adds_walking(build: Any) -> None:
    out = await ok(build(), "route_plan", {"origin": "故宫", "destination": "天安门广场", "city": "北京"})
    walk = next(m for m in out["results"][0]["modes"] if m["mode"] == "walk")
    assert walk == {"mode": "walk", "distance_km": 1.9, "duration_min": 26, "cost": 0.0, "note": "", "currency": "CNY"}


async def test_route_without_transit_keeps_driving(build: Any, fake: FakeLiveServices) -> None:
    fake.mode["amap"] = "no_transit"
    out = await ok(build(), "route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"})
    assert [m["mode"] for m in out["results"][0]["modes"]] == ["taxi", "drive"]
    assert "transit route unavailable" in out["note"] and "OVER_DIRECTION_RANGE" in out["note"]
    assert any(c.startswith("no transit route from Amap") for c in out["caveats"])


@pytest.mark.parametrize(("mode", "words", "retryable"), [
    ("auth", "INVALID_USER_KEY", False),
    ("quota", "DAILY_QUERY_OVER_LIMIT", False),
    ("rate", "CUQPS_HAS_EXCEEDED_THE_LIMIT", True),
    ("500", "HTTP 500", True),
    ("malformed", "not JSON", True),
    ("shape", "unexpected shape", False),
])
async def test_amap_errors(build: Any, fake: FakeLiveServices, world: Any, http: httpx.AsyncClient,
                           mode: str, words: str, retryable: bool) -> None:
    fake.mode["amap"] = mode
    message = await fails(build(), "poi_search", {"query": "故宫", "city": "北京"})
    assert words in message and "Amap" in message
    amap = AmapProvider(http, AMAP_KEY, world[0], base_url=fake.endpoints().amap)
    with pytest.raises(ProviderError) as info:
        await amap.places("故宫", world[0].resolve_city("北京"), 5)
    assert info.value.provider == "amap" and info.value.retryable is retryable


async def test_amap_wrong_key_is_refused(build: Any) -> None:
    message = await fails(build(amap_key="not-the-key"), "route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"})
    assert "AMAP_KEY is invalid" in message


async def test_amap_outside_china_uses_sandbox(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(), "poi_search", {"query": "Louvre", "city": "Paris"})
    assert out["source"] == "sandbox" and "outside the live source's coverage" in out["note"]
    assert out["caveats"] == ["sandbox data, not live: live data was requested but this place is outside the live "
                              "source's coverage; showing sandbox data instead"]
    assert fake.count("amap") == 0


# ------------------------------------------------------------------------------------ web search

async def test_searxng_search(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(searxng_url=fake.searxng_url), "web_search", {"query": "故宫 预约", "max_results": 5})
    assert out["source"] == "searxng" and [r["url"] for r in out["results"]] == [
        "https://www.dpm.org.cn/Visit.html", "https://en.wikipedia.org/wiki/Forbidden_City"]
    assert "提前7天" in out["results"][0]["snippet"]
    assert fake.requests[0][3]["format"] == "json" and fake.count("tavily") == 0  # SearXNG wins when both are set


async def test_searxng_engines_that_all_failed_are_an_error(build: Any, fake: FakeLiveServices) -> None:
    fake.mode["searxng"] = "engines_failed"  # a real answer of an instance whose five engines were all suspended
    message = await fails(build(searxng_url=fake.searxng_url), "web_search", {"query": "故宫 预约"})
    assert ("brave (Suspended: too many requests), duckduckgo (Suspended: CAPTCHA), google (Suspended: CAPTCHA), "
            "mojeek (Suspended: access denied), startpage (Suspended: CAPTCHA)") in message
    assert "says nothing about whether such pages exist" in message


@pytest.mark.parametrize("engine", ["startpage", "brave", "yahoo"])
async def test_searxng_one_engine_that_failed_is_an_error(build: Any, fake: FakeLiveServices, engine: str) -> None:
    answer = fixture("searxng/one_engine_2026-08.json")[engine]  # real answers, the search pinned to one engine
    fake.searxng_answer = answer
    message = await fails(build(searxng_url=fake.searxng_url), "web_search", {"query": "故宫 预约"})
    name, reason = answer["unresponsive_engines"][0]
    assert f"its search engines failed ({name} ({reason}))" in message


async def test_searxng_nothing_matched_is_not_an_error(build: Any, fake: FakeLiveServices) -> None:
    fake.searxng_answer = fixture("searxng/one_engine_2026-08.json")["wikidata"]  # no results, no engine failed
    out = await ok(build(searxng_url=fake.searxng_url), "web_search", {"query": "故宫 预约"})
    assert out["results"] == [] and not out.get("caveats")


async def test_searxng_some_engines_failed_is_a_caveat(build: Any, fake: FakeLiveServices) -> None:
    answer = json.loads(json.dumps(fixture("searxng/all_engines_failed_2026-09.json")))
    answer["results"] = [{"url": "https://www.dpm.org.cn/Visit.html", "title": "参观须知", "content": "实名预约"}]
    answer["unresponsive_engines"] = answer["unresponsive_engines"][:1]
    fake.searxng_answer = answer
    out = await ok(build(searxng_url=fake.searxng_url), "web_search", {"query": "故宫 预约"})
    assert len(out["results"]) == 1
    assert out["caveats"] == ["some web search engines failed (brave (Suspended: too many requests)); results may "
                              "be incomplete"]


async def test_tavily_search(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(), "web_search", {"query": "故宫 预约", "max_results": 1})
    assert out["source"] == "tavily" and len(out["results"]) == 1
    assert out["results"][0]["title"] == "参观须知 - 故宫博物院"


@pytest.mark.parametrize(("service", "mode", "words"), [
    ("tavily", "auth", "TAVILY_API_KEY was refused"),
    ("tavily", "quota", "credits are used up"),
    ("tavily", "rate", "wait a minute"),
    ("tavily", "500", "HTTP 500"),
    ("searxng", "rate", "rate-limiting"),
    ("searxng", "malformed", "not JSON"),
    ("searxng", "shape", "unexpected shape"),
])
async def test_web_search_errors(build: Any, fake: FakeLiveServices, service: str, mode: str, words: str) -> None:
    fake.mode[service] = mode
    tools = build(searxng_url=fake.searxng_url if service == "searxng" else None)
    assert words in await fails(tools, "web_search", {"query": "故宫"})


# ------------------------------------------------------------------------------------ Duffel

async def test_flight_search_maps_duffel_offers(build: Any, fake: FakeLiveServices) -> None:
    tools = build()
    out = await ok(tools, "flight_search", {"departure_city_name": "北京市", "arrival_city_name": "上海市", "depart_date": DAY})
    assert out["source"] == "duffel"
    assert [(f["number"], f["price"], f["depart"]) for f in out["results"]] == [
        ("MU5101", 1130.0, "2025-05-01 08:00"), ("CA1501", 1240.0, "2025-05-01 09:00"), ("FM9108", 890.0, "2025-05-01 13:30")]
    mu = out["results"][0]
    assert (mu["airline"], mu["from_airport_code"], mu["to_airport_code"], mu["duration_min"]) == ("东方航空", "PEK", "SHA", 135)
    assert mu["from_city"] == "北京" and mu["aircraft"] == "Airbus A330-300" and mu["arrive"] == "2025-05-01 10:15"
    assert out["results"][2]["duration_min"] == 135  # no ISO duration: from the times
    bodies = fake.duffel_bodies
    assert len(bodies) == 4 and {(b["data"]["slices"][0]["origin"], b["data"]["slices"][0]["destination"]) for b in bodies} == {
        ("PEK", "PVG"), ("PEK", "SHA"), ("PKX", "PVG"), ("PKX", "SHA")}
    assert all(b["data"]["max_connections"] == 0 and b["data"]["passengers"] == [{"type": "adult"}] for b in bodies)
    mu_only = await ok(tools, "flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海",
                                                "depart_date": DAY, "airline_name": "东方航空"})
    assert [f["number"] for f in mu_only["results"]] == ["MU5101"]


async def test_flight_connections(build: Any) -> None:
    out = await ok(build(), "flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海",
                                              "depart_date": DAY, "is_transfer": 1})
    (t,) = out["results"]
    assert (t["id"], t["price"], t["layover_min"], t["total_min"]) == ("CZ3102+CZ3523", 1480.0, 100, 435)
    assert t["via_airport"] == "广州白云国际机场" and [leg["number"] for leg in t["legs"]] == ["CZ3102", "CZ3523"]


@pytest.mark.parametrize(("mode", "words", "status", "retryable"), [
    ("auth", "DUFFEL_TOKEN was refused", 401, False),
    ("rate", "wait a minute", 429, True),
    ("invalid", "departure_date must be after the current date", 422, False),
    ("500", "HTTP 500", 500, True),
    ("malformed", "not JSON", 200, True),
])
async def test_duffel_errors(build: Any, fake: FakeLiveServices, world: Any, http: httpx.AsyncClient,
                             mode: str, words: str, status: int, retryable: bool) -> None:
    fake.mode["duffel"] = mode
    message = await fails(build(), "flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海",
                                                     "depart_date": DAY})
    assert words in message
    gaz = world[0]
    duffel = DuffelFlights(http, DUFFEL_TOKEN, gaz, base_url=fake.endpoints().duffel)
    q = FlightQuery(gaz.resolve_city("北京"), gaz.resolve_city("上海"), date(2025, 5, 1), ("PEK",), ("SHA",))
    with pytest.raises(ProviderError) as info:
        await duffel.flights(q)
    assert (info.value.provider, info.value.status_code, info.value.retryable) == ("duffel", status, retryable)


async def test_duffel_wrong_token(build: Any) -> None:
    message = await fails(build(duffel_token="duffel_test_wrong"), "flight_search",
                          {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": DAY})
    assert "DUFFEL_TOKEN was refused" in message and "not recognised" in message


async def test_duffels_own_example_in_pounds_is_converted(build: Any, fake: FakeLiveServices) -> None:
    """Duffel's published example answer, unchanged: its one fare, 45.00 GBP, was dropped by 'at
    least 100' when compared as a number with CNY; converted at the table's rate it is 441 CNY."""
    fake.duffel_answers["LHR-JFK"] = duffel_example()
    now = at("2020-06-01 10:00")
    args = {"departure_city_name": "伦敦", "arrival_city_name": "纽约", "depart_date": DUFFEL_EXAMPLE_DAY,
            "departure_airport_name": "LHR", "arrival_airport_name": "JFK", "min_sale_price": 100}
    out = await _ok(build(now), "flight_search", args, now)
    (ba1234,) = out["results"]
    assert (ba1234["number"], ba1234["airline"], ba1234["price"], ba1234["currency"]) == (
        "BA1234", "British Airways", 441.0, "CNY")
    assert ba1234["quoted"] == "45.00 GBP = 441.00 CNY at 9.8 (rates of 2025-06-30)"
    assert (ba1234["depart"], ba1234["duration_min"], ba1234["aircraft"]) == (
        "2020-06-13 16:38", 146, "Airbus Industries A380")
    assert len(out["results"]) == len(fixture("duffel/create_offer_request_gbp.json")["data"]["offers"])


async def test_foreign_fares_are_converted_with_a_stated_rate(build: Any, fake: FakeLiveServices) -> None:
    """Duffel's example with two derived offers: one in USD, one whose amount is '--'."""
    fake.duffel_answers["LHR-JFK"] = duffel_example(more_offers=True)
    now = at("2020-06-01 10:00")
    args = {"departure_city_name": "伦敦", "arrival_city_name": "纽约", "depart_date": DUFFEL_EXAMPLE_DAY,
            "departure_airport_name": "LHR", "arrival_airport_name": "JFK", "min_sale_price": 100}
    out = await _ok(build(now), "flight_search", args, now)
    (ba1234, ba1235) = out["results"]
    assert (ba1234["number"], ba1234["price"], ba1234["currency"]) == ("BA1234", 441.0, "CNY")
    assert ba1234["quoted"] == "45.00 GBP = 441.00 CNY at 9.8 (rates of 2025-06-30)"
    assert (ba1235["price"], ba1235["quoted"]) == (4390.91, "612.40 USD = 4390.91 CNY at 7.17 (rates of 2025-06-30)")
    assert "1 GBP = 9.8 CNY, 1 USD = 7.17 CNY" in out["note"]
    caveats = " ".join(out["caveats"])
    assert "converted to CNY from GBP, USD (rates of 2025-06-30" in caveats and "approximate" in caveats
    assert "1 Duffel offer(s) came without a usable price ('--')" in caveats
    cheap = await _ok(build(now), "flight_search", {**args, "min_sale_price": 0, "max_sale_price": 500}, now)
    assert [f["number"] for f in cheap["results"]] == ["BA1234"]


async def test_the_rate_table_setting(build: Any, fake: FakeLiveServices) -> None:
    fake.duffel_answers["LHR-JFK"] = duffel_example(more_offers=True)
    now = at("2020-06-01 10:00")
    args = {"departure_city_name": "伦敦", "arrival_city_name": "纽约", "depart_date": DUFFEL_EXAMPLE_DAY,
            "departure_airport_name": "LHR", "arrival_airport_name": "JFK"}
    out = await _ok(build(now, fx_rates="GBP=9.5@2026-01-02"), "flight_search", args, now)
    assert out["results"][0]["quoted"] == "45.00 GBP = 427.50 CNY at 9.5 (rates of 2026-01-02)"
    usd = out["results"][1]
    assert (usd["price"], usd["currency"], usd.get("quoted")) == (612.4, "USD", None)  # no USD rate: as quoted
    assert any("fares in USD are not converted" in c for c in out["caveats"])
    with pytest.raises(RatesError, match="add the date"):
        Rates.parse("GBP=9.5")
    with pytest.raises(RatesError, match="CODE=rate"):
        Rates.parse("GBP=abc@2026-01-02")


def test_the_plan_says_what_it_could_not_know() -> None:
    plan = TripPlan(title="t", origin_city="北京", destination_city="上海", start_date=DAY, end_date=DAY,
                    notes=["bring an ID card"], unknowns=["G531 is not on sale until 2026-07-27 12:45"])
    assert plan.all_notes == ["bring an ID card", "G531 is not on sale until 2026-07-27 12:45"]
    assert "unknowns" in TripPlan.model_json_schema()["properties"]


# ------------------------------------------------------------------------------------ selection

async def test_missing_keys_fall_back_with_a_note(build: Any, fake: FakeLiveServices) -> None:
    tools = build(NOW, amap_key=None, tavily_api_key=None, duffel_token=None)
    poi = await ok(tools, "poi_search", {"query": "故宫", "city": "北京"})
    assert poi["source"] == "sandbox" and "AMAP_KEY is not set" in poi["note"]
    web = await ok(tools, "web_search", {"query": "故宫"})
    assert "neither SEARXNG_URL nor TAVILY_API_KEY is set" in web["note"]
    flights = await ok(tools, "flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": DAY})
    assert flights["source"] == "sandbox" and "DUFFEL_TOKEN is not set" in flights["note"]
    hotels = await ok(tools, "hotel_search", {"city_name": "上海", "checkin_date": DAY, "checkout_date": "2025-05-02"})
    assert "no live hotel provider" in hotels["note"]
    trains = await ok(tools, "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": DAY})
    assert trains["source"] == "12306"  # needs no key
    assert {r[0] for r in fake.requests} == {"12306"}
    assert "sandbox data, not live" in flights["caveats"][0]


def test_sandbox_mode_builds_no_live_client(world: Any) -> None:
    gaz, sb = world
    providers = make_provider(live_config(travel_data="sandbox"), gaz, sb)
    assert providers.mode == "sandbox" and providers.trains is sb.trains


def test_endpoints_default_to_the_real_services() -> None:
    urls = LiveEndpoints()
    assert urls.amap.startswith("https://restapi.") and urls.duffel.startswith("https://api.")
    assert LiveEndpoints.from_config(live_config()) == urls

    @dataclass(frozen=True)
    class WithOverride(TravelSettings):
        amap_base_url: str | None = "http://127.0.0.1:9/amap"

    assert LiveEndpoints.from_config(WithOverride()).amap == "http://127.0.0.1:9/amap"
