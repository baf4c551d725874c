"""Live providers against recorded answers from a local fake (tests/fakes/live_providers.py):
results parsed through the real tools, every error a clear tool error, the sandbox fallback
visible, and no request leaving 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from tests.fakes.live_providers import AMAP_KEY, DUFFEL_TOKEN, TAVILY_KEY, FakeLiveServices
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.errors import ProviderError
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider
from tools.travel.factory import TravelSettings
from tools.travel.live import AmapProvider, DuffelFlights, LiveEndpoints, Rail12306
from tools.travel.provider import FlightQuery, TrainQuery

NOW = datetime(2025, 4, 20, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
CTX = ToolContext("call-1", NOW)
DAY = "2025-05-01"


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


@pytest.fixture
def build(world: tuple[Gazetteer, SandboxProvider], fake: FakeLiveServices, http: httpx.AsyncClient) -> Any:
    def make(**overrides: Any) -> ToolCollection:
        gaz, sb = world
        providers = make_provider(live_config(**overrides), gaz, sb, http=http, endpoints=fake.endpoints())
        return ToolCollection(build_travel_tools(gaz, providers))
    return make


async def ok(tools: ToolCollection, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await tools.execute(name, args, CTX)
    assert result.ok, result.error
    return json.loads(result.output)


async def fails(tools: ToolCollection, name: str, args: dict[str, Any]) -> str:
    result = await tools.execute(name, args, CTX)
    assert not result.ok, result.output[:300]
    assert result.error
    return result.error


# ------------------------------------------------------------------------------------ Amap

async def test_poi_search_parses_amap_places(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(), "poi_search", {"query": "故宫", "city": "北京"})
    assert out["source"] == "amap" and "Amap" in out["note"]
    first, _, cafe = out["results"]
    assert first["poi_id"] == "B000A8UIN8" and first["name"] == "故宫博物院" and first["city"] == "北京市"
    assert first["ticket_price"] == 60.0 and first["opening_hours"].startswith("08:30-17:00")
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
    out = await ok(build(), "route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"})
    modes = {m["mode"]: m for m in out["results"][0]["modes"]}
    assert set(modes) == {"taxi", "drive", "transit"}  # more than 3 km: no walking request
    assert modes["taxi"]["cost"] == 36 and modes["taxi"]["distance_km"] == 9.9 and modes["taxi"]["duration_min"] == 28
    assert modes["transit"]["cost"] == 4.0 and modes["transit"]["duration_min"] == 42
    assert "地铁4号线" in modes["transit"]["note"] and modes["transit"]["distance_km"] == 10.7
    paths = sorted(r[2] for r in fake.requests)
    assert paths == ["/amap/v3/direction/driving", "/amap/v3/direction/transit/integrated"]


async def test_short_route_adds_walking(build: Any) -> None:
    out = await ok(build(), "route_plan", {"origin": "故宫", "destination": "天安门广场", "city": "北京"})
    walk = next(m for m in out["results"][0]["modes"] if m["mode"] == "walk")
    assert walk == {"mode": "walk", "distance_km": 1.9, "duration_min": 26, "cost": 0.0, "note": ""}


async def test_route_without_transit_keeps_driving(build: Any, fake: FakeLiveServices) -> None:
    fake.mode["amap"] = "no_transit"
    out = await ok(build(), "route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"})
    assert [m["mode"] for m in out["results"][0]["modes"]] == ["taxi", "drive"]
    assert "transit route unavailable" in out["note"] and "OVER_DIRECTION_RANGE" in out["note"]


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
    assert fake.count("amap") == 0


# ------------------------------------------------------------------------------------ web search

async def test_searxng_search(build: Any, fake: FakeLiveServices) -> None:
    out = await ok(build(searxng_url=fake.searxng_url), "web_search", {"query": "故宫 预约", "max_results": 5})
    assert out["source"] == "searxng" and [r["url"] for r in out["results"]] == [
        "https://www.dpm.org.cn/Visit.html", "https://en.wikipedia.org/wiki/Forbidden_City"]
    assert "提前7天" in out["results"][0]["snippet"]
    assert fake.requests[0][3]["format"] == "json" and fake.count("tavily") == 0  # SearXNG wins when both are set


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


# ------------------------------------------------------------------------------------ 12306

async def test_train_search_parses_left_tickets(build: Any, fake: FakeLiveServices) -> None:
    tools = build()
    out = await ok(tools, "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": DAY})
    assert out["source"] == "12306"
    assert [t["number"] for t in out["results"]] == ["G1", "G3", "D313", "T109"]  # suspended and 杭州东 rows dropped
    g1, _, d313, t109 = out["results"]
    assert (g1["from_station"], g1["to_station"], g1["from_city"], g1["to_city"]) == ("北京南", "上海虹桥", "北京", "上海")
    assert (g1["depart"], g1["arrive"], g1["duration_min"], g1["type"]) == ("2025-05-01 07:00", "2025-05-01 11:29", 269, "高铁")
    assert {s["seat"]: (s["price"], s["left"]) for s in g1["seats"]} == {
        "商务座": (1748.0, 3), "一等座": (933.0, 20), "二等座": (553.0, 20)}
    assert d313["arrive"] == "2025-05-02 07:39" and d313["type"] == "动车"
    assert {s["seat"]: s["price"] for s in t109["seats"]} == {"硬座": 177.5, "硬卧": 325.5, "软卧": 496.5, "无座": 177.5}
    only = await ok(tools, "train_search", {"depart_station": "北京南", "arrive_station": "上海", "depart_date": DAY,
                                            "seat_name": "二等座"})
    assert [t["number"] for t in only["results"]] == ["G1"]  # G3 has no second-class seats left
    queries = [r for r in fake.requests if r[2].endswith("/query")]
    assert queries[0][3] == {"leftTicketDTO.train_date": DAY, "leftTicketDTO.from_station": "BJP",
                             "leftTicketDTO.to_station": "SHH", "purpose_codes": "ADULT"}
    assert sum(1 for r in fake.requests if r[2].endswith("/init")) == 1  # one session for both searches


async def test_train_transfers_via_named_station(build: Any) -> None:
    out = await ok(build(), "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": DAY,
                                             "is_transfer": 1, "middle_station_name": "南京"})
    assert [(t["id"], t["middle_station"], t["wait_min"]) for t in out["results"]] == [
        ("G1+G7012", "南京南", 28), ("G105+G7030", "南京南", 52)]
    assert out["results"][0]["total_min"] == 286


async def test_12306_follows_c_url(build: Any, fake: FakeLiveServices) -> None:
    fake.mode["12306"] = "redirect"
    out = await ok(build(), "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": DAY})
    assert len(out["results"]) == 4 and any(r[2].endswith("/leftTicket/queryG") for r in fake.requests)


@pytest.mark.parametrize(("mode", "words"), [
    ("html", "turned the query away"),
    ("auth", "turned the query away"),
    ("rate", "turned the query away"),
    ("refused", "预售日期"),
    ("500", "HTTP 500"),
    ("malformed", "not JSON"),
    ("shape", "unexpected shape"),
])
async def test_12306_errors(build: Any, fake: FakeLiveServices, mode: str, words: str) -> None:
    fake.mode["12306"] = mode
    message = await fails(build(), "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": DAY})
    assert words in message and "12306" in message


async def test_12306_bad_row_layout(world: Any, fake: FakeLiveServices, http: httpx.AsyncClient) -> None:
    gaz, _ = world
    rail = Rail12306(http, gaz, base_url=fake.endpoints().rail12306)
    rows, names = await rail.query(date(2025, 5, 1), "BJP", "SHH")
    assert len(rows) == 6 and names["VNP"] == "北京南"
    from tools.travel.live.rail_parse import parse_row
    with pytest.raises(ProviderError, match="unknown layout"):
        parse_row("a|b|c", date(2025, 5, 1), names, {})


async def test_station_without_telecode_uses_sandbox(build: Any, world: Any) -> None:
    gaz, _ = world
    yz = gaz.resolve_city("扬州")
    assert yz.stations == ("扬州东",)
    out = await ok(build(), "train_search", {"depart_station": "扬州", "arrive_station": "北京", "depart_date": DAY})
    assert out["source"] == "sandbox" and "12306 has no code" in out["note"]


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


# ------------------------------------------------------------------------------------ selection

async def test_missing_keys_fall_back_with_a_note(build: Any, fake: FakeLiveServices) -> None:
    tools = build(amap_key=None, tavily_api_key=None, duffel_token=None)
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


async def test_unreachable_service_is_a_clear_error(world: Any, http: httpx.AsyncClient) -> None:
    gaz, _ = world
    rail = Rail12306(http, gaz, base_url="http://127.0.0.1:9")  # nothing listens on the discard port
    q = TrainQuery(gaz.resolve_city("北京"), gaz.resolve_city("上海"), date(2025, 5, 1), ("北京",), ("上海",))
    with pytest.raises(ProviderError, match="could not be reached") as info:
        await rail.trains(q)
    assert info.value.retryable
