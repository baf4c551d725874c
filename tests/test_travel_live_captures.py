"""More answers the services really gave (tests/fixtures/providers/, SOURCES.md): 12306 rows of
2020 (trains suspended that day, 47 fields) and of 2026-09 (one train to two stations of a city,
one train from two stations), Amap's answer to a place search around a point, SearXNG's answer
when some of its engines failed, Tavily's answer to a search. Counts are read from the bodies, not from our output."""

# ruff: noqa: F811  (the fixtures imported from tests.live_support are named again as parameters)
from __future__ import annotations

import json
from datetime import date

from tests.fakes.live_providers import FakeLiveServices, fixture
from tests.live_support import Build, at, build, fake, http, ok, world  # noqa: F401 (pytest fixtures)
from tools.travel.live.rail_parse import Skipped, parse_row
from tools.travel.live.telecodes import StationTable
from tools.travel.models import Train

ROWS = "12306/rows_2020_and_2026-09.json"
NOW = at("2026-09-01 09:00")  # 2026-09-12 has been on sale since 2026-08-29


def rows(query: str) -> list[str]:
    return [r["row"] for r in fixture(ROWS)["rows"] if r["query"].endswith(query)]


def answer(found: list[str], names: dict[str, str]) -> str:
    """12306's envelope around captured rows (the rows are real, the envelope is the one every
    captured answer has)."""
    return json.dumps({"httpstatus": 200, "data": {"result": found, "flag": "1", "map": names}, "messages": "",
                       "status": True}, ensure_ascii=False)


async def test_one_train_to_two_stations_of_a_city_is_shown_twice(build: Build, fake: FakeLiveServices) -> None:
    """G811 calls at 杭州东 and then 杭州南: 12306 answers one row for each, and both are shown."""
    found = rows("->HGH 2026-09-12") + rows("->XHH 2026-09-12")
    fake.rail_bodies[("2026-09-12", "BJP", "HZH")] = answer(found, {"VNP": "北京南", "HGH": "杭州东", "XHH": "杭州南"})
    out = await ok(build(NOW), "train_search", {"depart_station": "北京", "arrive_station": "杭州",
                                                "depart_date": "2026-09-12"}, NOW)
    assert out["matched"] == len(found) == 2
    assert [(t["number"], t["to_station"], t["arrive"]) for t in out["results"]] == [
        ("G811", "杭州东", "2026-09-12 15:39"), ("G811", "杭州南", "2026-09-12 15:53")]
    fares = [{s["seat"]: s["price"] for s in t["seats"]} for t in out["results"]]
    assert fares == [{"商务座": 2310.0, "一等座": 1020.0, "二等座": 673.0, "无座": 673.0},
                     {"商务座": 2339.0, "一等座": 1036.0, "二等座": 682.0, "无座": 682.0}]
    assert all("sale_opens" not in t for t in out["results"])  # on sale: the stamp only says since when


async def test_one_train_from_two_stations_of_a_city_is_shown_twice(build: Build, fake: FakeLiveServices) -> None:
    found = rows("BJP->SHH 2026-09-12") + rows("VNP->SHH 2026-09-12")
    fake.rail_bodies[("2026-09-12", "BJP", "SHH")] = answer(found, {"BJP": "北京", "VNP": "北京南", "SHH": "上海"})
    out = await ok(build(NOW), "train_search", {"depart_station": "北京", "arrive_station": "上海",
                                                "depart_date": "2026-09-12"}, NOW)
    assert out["matched"] == len(found) == 2
    assert [(t["number"], t["from_station"], t["depart"], t["duration_min"]) for t in out["results"]] == [
        ("G5", "北京", "2026-09-12 07:40", 292), ("G5", "北京南", "2026-09-12 07:59", 273)]
    south = await ok(build(NOW), "train_search", {"depart_station": "北京南", "arrive_station": "上海",
                                                  "depart_date": "2026-09-12", "seat_name": "二等座"}, NOW)
    ((g5,),) = [south["results"]]
    assert {s["seat"]: s["price"] for s in g5["seats"]}["二等座"] == 667.0


def test_trains_suspended_that_day_are_not_trains_to_take() -> None:
    """Rows of a 2020 answer (衢州 -> 杭州): 47 fields, a suspended train has 24:00, 24:00 and 99:59
    for its times, and its button says why."""
    table = StationTable.load()
    parsed = [parse_row(r, date(2020, 3, 1), {}, table) for r in rows("2020-03-01")]
    assert {len(r.split("|")) for r in rows("2020-03-01")} == {47}
    k530, g1322, g7382, k526 = parsed
    assert k530 == Skipped("K530", "列车停运") and g1322 == Skipped("G1322", "列车运行图调整,暂停发售")
    assert isinstance(g7382, Train) and isinstance(k526, Train)
    assert (g7382.from_station, g7382.to_station, g7382.depart, g7382.arrive) == ("衢州", "杭州东", "2020-03-01 07:15",
                                                                                 "2020-03-01 08:42")
    assert (k526.depart, k526.arrive) == ("2020-03-01 22:13", "2020-03-02 02:05")  # overnight
    assert g7382.seats == k526.seats == []  # rows of 2020 carry no yp_info_new (field 39): no fares to show


async def test_amaps_answer_around_a_point(build: Build, fake: FakeLiveServices) -> None:
    """A real place/around answer: `[]` for every empty field, ratings as strings or `[]`, one
    place of two types ("...;公共停车场|...;路边停车场")."""
    body = fixture("amap/place_around_tianjin_parking.json")
    fake.amap_answers["place/around"] = body
    now = at("2025-04-20 10:00")
    out = await ok(build(now), "poi_around_search", {"location": "天津站", "keyword": "停车场", "radius": 500}, now)
    assert out["matched"] == len(body["pois"]) == 8
    assert [p["poi_id"] for p in out["results"]] == [p["id"] for p in body["pois"]]
    assert [p["distance_m"] for p in out["results"]] == [int(p["distance"]) for p in body["pois"]]
    first, *_, last = out["results"]
    assert (first["name"], first["city"], first["address"], first["category"]) == (
        "三轻楼地上停车场", "天津市", "河西区宾馆西路18号附近", "公共停车场")
    assert last["category"] == "公共停车场"  # the first of its two types
    assert all("ticket_price" not in p for p in out["results"])  # not sights: no ticket


async def test_searxng_with_some_engines_failed(build: Build, fake: FakeLiveServices) -> None:
    body = fixture("searxng/some_engines_failed_2026.json")
    fake.searxng_answer = body
    now = at("2026-09-01 09:00")
    out = await ok(build(now, searxng_url=fake.searxng_url), "web_search", {"query": body["query"]}, now)
    assert [r["url"] for r in out["results"]] == [r["url"] for r in body["results"]]
    assert out["caveats"] == ["some web search engines failed (brave (too many requests), startpage (CAPTCHA)); "
                              "results may be incomplete"]


async def test_tavily_answer(build: Build, fake: FakeLiveServices) -> None:
    """A whole answer of Tavily's search: a result whose content is a Python dict written out as text,
    `null` raw content, `answer` and `follow_up_questions` null."""
    body = fixture("tavily/search_weather_san_francisco_2025-06-17.json")
    fake.tavily_answer = body
    out = await ok(build(NOW), "web_search", {"query": body["query"]}, NOW)
    assert out["source"] == "tavily"
    assert [(r["title"], r["url"]) for r in out["results"]] == [(r["title"], r["url"]) for r in body["results"]]
    weather, forecast = out["results"]
    assert weather["snippet"].startswith("{'location': {'name': 'San Francisco'")
    assert len(weather["snippet"]) == 400 and weather["snippet"].endswith("...")  # a long text is cut
    assert forecast["snippet"] == body["results"][1]["content"]
