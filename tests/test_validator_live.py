"""The Validator on the live path: the live providers answer with real captured bodies
(tests/fixtures/providers/, served by tests/fakes/live_providers.py), a plan is made of what the
tools showed, and ToolFacts (the Validator's facts on the live path) asks the same tools again.
What the tools showed is never called missing or wrong; a plan item that contradicts them is."""

# ruff: noqa: F811  (the fixtures imported from tests.live_support are named again as parameters)
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from agent_core.schema import Function, Message, ToolCall
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.tool_facts import ToolFacts
from agent_core.validator.validator import Validator
from tests.fakes.live_providers import (
    DUFFEL_EXAMPLE_DAY,
    FakeLiveServices,
    duffel_example,
    fixture,
    fixture_text,
)
from tests.live_support import Build, at, build, fake, http, world  # noqa: F401 (pytest fixtures)
from tests.test_travel_live_rail import before_sale
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import Leg, TripPlan
from tools.travel import build_travel_tools
from tools.travel.live import Rail12306
from tools.travel.live.telecodes import StationTable
from tools.travel.provider import TravelProviders


@dataclass
class Run:
    """Tools called as a model would call them, the conversation kept for the Validator's grounding."""

    tools: ToolCollection
    now: datetime
    messages: list[Message] = field(default_factory=list)

    async def call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        call_id = f"call-{len(self.messages)}"
        result = await self.tools.execute(name, args, ToolContext(call_id, self.now))
        assert result.ok, result.error
        self.messages += [Message.assistant(None, [ToolCall(id=call_id, function=Function(name=name, arguments=json.dumps(args)))]),
                          Message.tool(result.output, tool_call_id=call_id, name=name)]
        return json.loads(result.output)

    async def grade(self, world: Any, plan: TripPlan) -> CheckReport:
        validator = Validator(facts=ToolFacts(self.tools, world[0], lambda: self.now), tools=self.tools, model=None)
        report, _ = await validator.checks(request="", reply="", plan=plan, messages=self.messages, now=self.now)
        assert report is not None
        return report


def leg_of(t: dict[str, Any], seat: str, **changes: Any) -> Leg:
    fares = {s["seat"]: s["price"] for s in t["seats"]}
    values = {"kind": "train", "number": t["number"], "origin": t["from_station"], "destination": t["to_station"],
              "origin_city": t["from_city"] or None, "destination_city": t["to_city"] or None, "depart": t["depart"],
              "arrive": t["arrive"], "seat": seat, "price": fares[seat], **changes}
    return Leg(**values)


def plan_of(*legs: Leg, day: str) -> TripPlan:
    return TripPlan(title="t", origin_city="北京", destination_city="太原", start_date=day, end_date=day, legs=list(legs),
                    total_cost=sum(leg.price for leg in legs), data_source="live")


BJ_TY = "12306/left_ticket_BJP_TYV_2022-10-28.json"
NOW_2022 = at("2022-10-27 09:00")


def facts_of(report: CheckReport, item: str) -> list[str]:
    """The fact findings about one plan item ("legs[0]")."""
    return [f.line("en") for f in report.findings if f.item.startswith(item) and f.category is Category.FACT]


# ------------------------------------------------------------------------------------ 12306

async def test_every_train_of_a_real_answer_passes(build: Build, fake: FakeLiveServices, world: Any) -> None:
    """Beijing -> Taiyuan as 12306 answered it: six of its trains leave from 北京丰台, a station
    the map lacks; every train with a seat left, planned as the tool showed it, is found again."""
    body = fixture(BJ_TY)
    fake.rail_bodies[("2022-10-28", "BJP", "TYV")] = json.dumps(body, ensure_ascii=False)
    run = Run(build(NOW_2022), NOW_2022)
    out = await run.call("train_search", {"depart_station": "北京", "arrive_station": "太原", "depart_date": "2022-10-28"})
    bookable = [t for t in out["results"] if any(s["left"] > 0 for s in t["seats"])]
    assert len(out["results"]) == len(body["data"]["result"]) and len(bookable) >= 6
    assert sum(t["from_station"] == "北京丰台" for t in bookable) >= 4
    for t in bookable:
        seat = next(s["seat"] for s in t["seats"] if s["left"] > 0)
        report = await run.grade(world, plan_of(leg_of(t, seat), day="2022-10-28"))
        assert facts_of(report, "legs[0]") == [], t["number"]
        assert report.lookups == 1


async def test_a_plan_that_contradicts_the_answer_is_flagged(build: Build, fake: FakeLiveServices, world: Any) -> None:
    fake.rail_bodies[("2022-10-28", "BJP", "TYV")] = fixture_text(BJ_TY)
    run = Run(build(NOW_2022), NOW_2022)
    out = await run.call("train_search", {"depart_station": "北京", "arrive_station": "太原", "depart_date": "2022-10-28"})
    g623 = out["results"][0]
    assert (g623["number"], g623["from_station"], g623["depart"]) == ("G623", "北京丰台", "2022-10-28 08:13")
    wrong = leg_of(g623, "二等座", depart="2022-10-28 08:30", price=200)
    found = facts_of(await run.grade(world, plan_of(wrong, day="2022-10-28")), "legs[0]")
    assert len(found) == 2
    assert "departure 2022-10-28 08:30 does not match 2022-10-28 08:13" in found[0]
    assert "price 200 CNY for 1 is not the fare x travellers" in found[1] and "二等座 210.5" in found[1]


async def test_trains_from_a_station_the_map_lacks_are_searched_by_it(build: Build, fake: FakeLiveServices,
                                                                      world: Any) -> None:
    """北京丰台, "Beijing Fengtai" and its pinyin name the station of the official table."""
    fake.rail_bodies[("2022-10-28", "BJP", "TYV")] = fixture_text(BJ_TY)
    run = Run(build(NOW_2022), NOW_2022)
    for name in ("北京丰台", "北京丰台站", "Beijing Fengtai", "beijingfengtai"):
        out = await run.call("train_search", {"depart_station": name, "arrive_station": "太原", "depart_date": "2022-10-28"})
        assert [t["number"] for t in out["results"]] == ["G623", "G605", "G607", "G627", "G629", "G613"], name
        assert {t["from_station"] for t in out["results"]} == {"北京丰台"}
    west = await run.call("train_search", {"depart_station": "Beijing West", "arrive_station": "太原南",
                                           "depart_date": "2022-10-28"})
    assert west["results"] == [] and "hint" in west  # 北京西's trains of the answer go to 太原, not 太原南


async def test_a_train_not_on_sale_yet_passes_with_its_listed_fare(build: Build, fake: FakeLiveServices,
                                                                   world: Any) -> None:
    g531 = fixture("12306/rows_2024-2026.json")["rows"][7]["row"]
    body = {"httpstatus": 200, "data": {"result": [before_sale(g531, "12点45分起售")], "flag": "1",
                                        "map": {"VNP": "北京南", "AOH": "上海虹桥"}}, "messages": "", "status": True}
    fake.rail_bodies[("2026-08-10", "BJP", "SHH")] = json.dumps(body, ensure_ascii=False)
    now = at("2026-07-27 09:00")
    run = Run(build(now), now)
    out = await run.call("train_search", {"depart_station": "北京", "arrive_station": "上海", "depart_date": "2026-08-10"})
    (t,) = out["results"]
    assert t["sale_opens"] == "2026-07-27 12:45" and all(s["left"] == 0 for s in t["seats"])
    plan = plan_of(leg_of(t, "二等座", destination_city="上海"), day="2026-08-10")
    assert facts_of(await run.grade(world, plan), "legs[0]") == []
    late = plan_of(leg_of(t, "二等座", destination_city="上海", arrive="2026-08-10 12:30"), day="2026-08-10")
    (finding,) = facts_of(await run.grade(world, late), "legs[0]")
    assert f"arrival 2026-08-10 12:30 does not match {t['arrive']}" in finding


async def test_a_station_outside_the_table_shown_by_its_code(fake: FakeLiveServices, http: httpx.AsyncClient,
                                                             world: Any) -> None:
    """A station neither 12306's answer nor the table names is shown as its code; a plan that
    keeps the code, with the cities it was searched between, is found again."""
    gaz, sandbox = world
    full = StationTable.load()
    table = StationTable(s for s in (full.by_code(c) for c in ("BJP", "BXP", "TYV", "TNV")) if s)
    body = fixture(BJ_TY)
    del body["data"]["map"]["FTP"]
    fake.rail_bodies[("2022-10-28", "BJP", "TYV")] = json.dumps(body, ensure_ascii=False)
    rail = Rail12306(http, gaz, stations=table, base_url=fake.endpoints().rail12306, clock=lambda: NOW_2022)
    providers = TravelProviders(trains=rail, flights=sandbox.flights, hotels=sandbox.hotels, places=sandbox.places,
                                routes=sandbox.routes, web=sandbox.web, mode="live", stations=table)
    run = Run(ToolCollection(build_travel_tools(gaz, providers)), NOW_2022)
    out = await run.call("train_search", {"depart_station": "北京", "arrive_station": "太原", "depart_date": "2022-10-28"})
    g623 = out["results"][0]
    assert (g623["from_station"], g623["from_city"]) == ("FTP", "") and "FTP" in g623["note"]
    plan = plan_of(leg_of(g623, "二等座", origin_city="北京", destination_city="太原"), day="2022-10-28")
    assert facts_of(await run.grade(world, plan), "legs[0]") == []


async def test_one_train_to_two_stations_is_checked_for_the_one_planned(build: Build, fake: FakeLiveServices,
                                                                       world: Any) -> None:
    """G811 calls at 杭州东 (15:39) and then 杭州南 (15:53), one real row each (2026-09-12)."""
    rows = [r["row"] for r in fixture("12306/rows_2020_and_2026-09.json")["rows"] if r["query"].split()[0] in ("VNP->HGH", "VNP->XHH")]
    body = {"httpstatus": 200, "data": {"result": rows, "flag": "1", "map": {"VNP": "北京南", "HGH": "杭州东",
                                                                           "XHH": "杭州南"}}, "messages": "", "status": True}
    fake.rail_bodies[("2026-09-12", "BJP", "HZH")] = json.dumps(body, ensure_ascii=False)
    now = at("2026-09-01 09:00")
    run = Run(build(now), now)
    out = await run.call("train_search", {"depart_station": "北京", "arrive_station": "杭州", "depart_date": "2026-09-12"})
    east, south = out["results"]
    assert (east["to_station"], south["to_station"]) == ("杭州东", "杭州南")
    for t in (east, south):
        plan = plan_of(leg_of(t, "二等座", destination_city="杭州"), day="2026-09-12")
        assert facts_of(await run.grade(world, plan), "legs[0]") == [], t["to_station"]
    mixed = plan_of(leg_of(south, "二等座", destination_city="杭州", arrive=east["arrive"]), day="2026-09-12")
    (finding,) = facts_of(await run.grade(world, mixed), "legs[0]")
    assert "arrival 2026-09-12 15:39 does not match 2026-09-12 15:53" in finding


# ------------------------------------------------------------------------------------ Duffel and Amap

async def test_a_fare_converted_from_gbp_passes_and_its_pounds_do_not(build: Build, fake: FakeLiveServices,
                                                                      world: Any) -> None:
    fake.duffel_answers["LHR-JFK"] = duffel_example()  # Duffel's own example, unchanged
    now = at("2020-06-01 10:00")
    run = Run(build(now), now)
    out = await run.call("flight_search", {"departure_city_name": "伦敦", "arrival_city_name": "纽约",
                                           "depart_date": DUFFEL_EXAMPLE_DAY, "departure_airport_name": "LHR",
                                           "arrival_airport_name": "JFK"})
    f = out["results"][0]
    assert (f["number"], f["price"], f["currency"]) == ("BA1234", 441.0, "CNY") and "45.00 GBP" in f["quoted"]

    def flight(price: float) -> TripPlan:
        leg = Leg(kind="flight", number=f["number"], origin=f["from_airport"], destination=f["to_airport"],
                  origin_city="伦敦", destination_city="纽约", depart=f["depart"], arrive=f["arrive"],
                  airline=f["airline"], price=price)
        return TripPlan(title="t", origin_city="伦敦", destination_city="纽约", start_date=DUFFEL_EXAMPLE_DAY,
                        end_date=DUFFEL_EXAMPLE_DAY, legs=[leg], total_cost=price, data_source="live")

    assert facts_of(await run.grade(world, flight(441.0)), "legs[0]") == []
    (finding,) = facts_of(await run.grade(world, flight(45.0)), "legs[0]")
    assert "price 45 CNY for 1 is not the fare x travellers" in finding and "441" in finding


async def test_a_taxi_fare_from_amap_passes_and_a_far_one_does_not(build: Build, fake: FakeLiveServices,
                                                                   world: Any) -> None:
    now = at("2025-04-20 10:00")
    run = Run(build(now), now)
    out = await run.call("route_plan", {"origin": "故宫", "destination": "北京南站", "city": "北京"})
    taxi = next(m for m in out["results"][0]["modes"] if m["mode"] == "taxi")
    assert (taxi["cost"], taxi["duration_min"]) == (40, 52)  # the real answer's taxi_cost "39.76049999999999"

    def taxi_ride(price: float, travellers: int = 1) -> TripPlan:
        leg = Leg(kind="taxi", origin="故宫", destination="北京南站", origin_city="北京", destination_city="北京",
                  depart="2025-05-01 09:00", arrive="2025-05-01 09:52", price=price)
        return TripPlan(title="t", origin_city="北京", destination_city="北京", start_date="2025-05-01",
                        end_date="2025-05-01", legs=[leg], total_cost=price, travellers=travellers, data_source="live")

    for price, travellers in ((40, 1), (45, 1), (40, 3), (80, 6)):  # an estimate: near it, per car
        report = await run.grade(world, taxi_ride(price, travellers))
        assert [f.line("en") for f in report.findings if f.item.startswith("legs[0]")] == [], (price, travellers)
    (finding,) = facts_of(await run.grade(world, taxi_ride(400)), "legs[0]")
    assert "the taxi cost of 400 CNY is far from the estimate" in finding
    assert "route_plan 故宫→北京南站: taxi 40 CNY a car" in finding
