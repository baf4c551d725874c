"""The travel tools through ToolCollection: schemas, results a model can cite, errors it can act on."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tools.base import SharedLocation, ToolContext
from tools.collection import ToolCollection
from tools.travel import Gazetteer, SandboxProvider, build_travel_tools, make_provider
from tools.travel.factory import TravelSettings

NOW = datetime(2025, 4, 20, 10, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
CTX = ToolContext("call-1", NOW)
NAMES = ["train_search", "flight_search", "hotel_search", "poi_search", "poi_around_search", "route_plan",
         "web_search", "current_location"]


@pytest.fixture(scope="module")
def world() -> tuple[Gazetteer, SandboxProvider]:
    gaz = Gazetteer.load()
    return gaz, SandboxProvider(gaz)


@pytest.fixture(scope="module")
def tools(world: tuple[Gazetteer, SandboxProvider]) -> ToolCollection:
    gaz, sb = world
    return ToolCollection(build_travel_tools(gaz, make_provider(TravelSettings(), gaz, sb)))


async def run(tools: ToolCollection, name: str, args: dict[str, Any], ctx: ToolContext = CTX) -> dict[str, Any]:
    result = await tools.execute(name, args, ctx)
    assert result.ok, result.error
    return json.loads(result.output)  # type: ignore[no-any-return]


async def error(tools: ToolCollection, name: str, args: dict[str, Any]) -> str:
    result = await tools.execute(name, args, CTX)
    assert not result.ok, result.output[:200]
    assert result.error
    return result.error


def test_schemas(tools: ToolCollection) -> None:
    assert tools.names == NAMES
    params = {p["function"]["name"]: p["function"]["parameters"] for p in tools.to_params()}
    assert set(params["flight_search"]["required"]) == {"departure_city_name", "arrival_city_name", "depart_date"}
    assert {"is_transfer", "airline_name", "min_sale_price", "max_sale_price", "departure_airport_name",
            "arrival_airport_name", "depart_time_earliest", "depart_time_latest"} <= set(params["flight_search"]["properties"])
    assert set(params["train_search"]["required"]) == {"depart_station", "arrive_station", "depart_date"}
    assert {"middle_station_name", "seat_name", "arrive_time_latest", "max_price"} <= set(params["train_search"]["properties"])
    assert params["hotel_search"]["required"] == ["city_name"]
    assert {"landmark", "distance_range", "has_breakfast", "level_name", "brand_name"} <= set(params["hotel_search"]["properties"])
    assert set(params["route_plan"]["required"]) == {"origin", "destination", "city"}
    assert params["poi_search"]["required"] == ["query"] and params["web_search"]["required"] == ["query"]


async def test_train_search(tools: ToolCollection) -> None:
    out = await run(tools, "train_search", {"depart_station": "北京", "arrive_station": "上海",
                                            "depart_date": "2025-05-02", "seat_name": "二等座",
                                            "depart_time_earliest": "2025-05-02 08:00", "arrive_time_latest": "18:00"})
    assert out["source"] == "sandbox" and "sandbox" in out["note"] and out["matched"] >= 1
    for t in out["results"]:
        assert t["depart"] >= "2025-05-02 08:00" and t["arrive"] <= "2025-05-02 18:00"
        assert any(s["seat"] == "二等座" and s["left"] > 0 for s in t["seats"])
    station = await run(tools, "train_search", {"depart_station": "北京南", "arrive_station": "上海虹桥站",
                                                "depart_date": "2025-05-02"})
    assert {t["from_station"] for t in station["results"]} == {"北京南"}
    cheap = await run(tools, "train_search", {"depart_station": "北京", "arrive_station": "上海",
                                              "depart_date": "2025-05-02", "max_price": 300})
    assert cheap["results"] and all(t["number"][0] in "ZTK" for t in cheap["results"])


async def test_train_transfer(tools: ToolCollection) -> None:
    out = await run(tools, "train_search", {"depart_station": "北京", "arrive_station": "乌鲁木齐",
                                            "depart_date": "2025-05-02", "is_transfer": 1})
    assert out["results"] and all(len(t["legs"]) == 2 and "+" in t["id"] for t in out["results"])
    via = await run(tools, "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-05-02",
                                            "is_transfer": 1, "middle_station_name": "南京南"})
    assert via["results"] and all(t["legs"][0]["to_city"] == "南京" for t in via["results"])


async def test_departed_trains_are_hidden_today(tools: ToolCollection) -> None:
    ctx = ToolContext("c", datetime(2025, 5, 2, 15, 0, tzinfo=ZoneInfo("Asia/Shanghai")))
    out = await run(tools, "train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-05-02"}, ctx)
    assert out["results"] and all(t["depart"] >= "2025-05-02 15:00" for t in out["results"])


async def test_flight_search(tools: ToolCollection) -> None:
    out = await run(tools, "flight_search", {"departure_city_name": "北京市", "arrival_city_name": "上海市",
                                             "depart_date": "2025-05-02", "arrival_airport_name": "虹桥",
                                             "depart_time_earliest": "08:00", "max_sale_price": 1500})
    assert out["results"]
    for f in out["results"]:
        assert f["to_airport_code"] == "SHA" and f["depart"][11:] >= "08:00" and f["price"] <= 1500
    airline = await run(tools, "flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海",
                                                 "depart_date": "2025-05-02", "airline_name": "东方航空,中国国航"})
    assert airline["results"] and {f["airline"] for f in airline["results"]} <= {"东方航空", "中国国航"}
    conn = await run(tools, "flight_search", {"departure_city_name": "拉萨", "arrival_city_name": "东京",
                                              "depart_date": "2025-05-02", "is_transfer": 1})
    assert conn["results"] and all(len(t["legs"]) == 2 for t in conn["results"])


async def test_hotel_search(tools: ToolCollection) -> None:
    out = await run(tools, "hotel_search", {"city_name": "杭州", "checkin_date": "2025-05-02", "checkout_date": "2025-05-04",
                                            "landmark": "西湖", "distance_range": 2500, "has_breakfast": 1})
    assert out["results"] and out["landmark"] == "西湖"
    distances = [h["distance_m"] for h in out["results"]]
    assert distances == sorted(distances) and max(distances) <= 2500
    assert all(h["has_breakfast"] and h["nights"] == 2 and h["hotel_id"].startswith("H-hangzhou-") for h in out["results"])
    five = await run(tools, "hotel_search", {"city_name": "上海", "checkin_date": "2025-05-02", "level_name": "五星级"})
    assert five["results"] and all(h["stars"] == 5 for h in five["results"])
    assert five["checkout_date"] == "2025-05-03"
    default = await run(tools, "hotel_search", {"city_name": "北京"})
    assert default["checkin_date"] == "2025-04-20" and default["checkout_date"] == "2025-04-21"


async def test_places_and_routes(tools: ToolCollection) -> None:
    wanda = await run(tools, "poi_search", {"query": "万达广场", "city": "北京"})
    assert wanda["matched"] == 3  # ambiguous: the agent should ask which one
    around = await run(tools, "poi_around_search", {"location": "故宫", "keyword": "餐厅", "radius": 1000, "city": "北京"})
    assert around["results"] and all(p["distance_m"] <= 1000 and p["category"] == "美食" for p in around["results"])
    route = await run(tools, "route_plan", {"origin": "上海虹桥站", "destination": "外滩", "city": "上海"})
    modes = {m["mode"]: m for m in route["results"][0]["modes"]}
    assert {"taxi", "drive", "transit"} <= set(modes) and 50 <= modes["taxi"]["cost"] <= 120
    only = await run(tools, "route_plan", {"origin": "外滩", "destination": "豫园", "city": "上海", "mode": "walk"})
    assert [m["mode"] for m in only["results"][0]["modes"]] == ["walk"]


async def test_web_and_location(tools: ToolCollection) -> None:
    web = await run(tools, "web_search", {"query": "高铁 退票"})
    assert web["results"] and "offline" in web["note"]
    home = await run(tools, "current_location", {}, ToolContext("c", NOW, home_city="上海"))
    assert home["source"] == "home_city" and home["city"] == "上海"
    shared = await run(tools, "current_location", {}, ToolContext("c", NOW, location=SharedLocation(30.25, 120.16, "here")))
    assert shared["source"] == "shared_location" and shared["city"] == "杭州"


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("train_search", {"depart_station": "北惊", "arrive_station": "上海", "depart_date": "2025-05-02"}, "北京 (Beijing)"),
        ("train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-04-01"}, "in the past"),
        ("train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025/05/02"}, "YYYY-MM-DD"),
        ("train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-05-02",
                          "depart_time_earliest": "25:00"}, "HH:MM"),
        ("train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-05-02", "max_price": -5},
         "greater than or equal to 0"),
        ("train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2025-05-02", "seat_name": "站票"},
         "seat_name"),
        ("train_search", {"depart_station": "北京", "arrive_station": "台北", "depart_date": "2025-05-02"}, "no railway station"),
        ("train_search", {"depart_station": "北京", "arrive_station": "北京西", "depart_date": "2025-05-02"}, "same city"),
        ("flight_search", {"departure_city_name": "北京", "arrival_city_name": "Shangai", "depart_date": "2025-05-02"}, "上海"),
        ("flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": "2025-02-30"},
         "not a real calendar date"),
        ("flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": "2025-05-02",
                           "min_sale_price": 900, "max_sale_price": 100}, "min_sale_price"),
        ("flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": "2025-05-02",
                           "arrival_airport_name": "首都"}, "PVG"),
        ("hotel_search", {"city_name": "杭州", "checkin_date": "2025-05-04", "checkout_date": "2025-05-04"},
         "at least one day after"),
        ("hotel_search", {"city_name": "杭州", "checkin_date": "2025-05-04", "checkout_date": "2025-05-02"},
         "at least one day after"),
        ("hotel_search", {"city_name": "杭州", "price_low": -1}, "greater than or equal to 0"),
        ("hotel_search", {"city_name": "杭州", "checkin_date": "2025-01-01", "checkout_date": "2025-01-02"}, "in the past"),
        ("poi_search", {"query": ""}, "query"),
        ("route_plan", {"origin": "外滩", "destination": "故宫", "city": "上海"}, "route_plan is for trips inside one city"),
        ("route_plan", {"origin": "qqqqqq", "destination": "外滩", "city": "上海"}, "no place named"),
        ("web_search", {}, "query: required field is missing"),
    ],
)
async def test_bad_input(tools: ToolCollection, name: str, args: dict[str, Any], expected: str) -> None:
    assert expected in await error(tools, name, args)


async def test_live_without_keys_falls_back_visibly(world: tuple[Gazetteer, SandboxProvider]) -> None:
    gaz, sb = world
    providers = make_provider(TravelSettings(travel_data="live"), gaz, sb)
    assert providers.mode == "live"
    live = ToolCollection(build_travel_tools(gaz, providers))
    out = await run(live, "route_plan", {"origin": "外滩", "destination": "豫园", "city": "上海"})
    assert out["source"] == "sandbox" and "AMAP_KEY is not set" in out["note"]
    out = await run(live, "web_search", {"query": "高铁"})
    assert "SEARXNG_URL" in out["note"]
    out = await run(live, "flight_search", {"departure_city_name": "北京", "arrival_city_name": "上海", "depart_date": "2025-05-02"})
    assert "DUFFEL_TOKEN" in out["note"]
