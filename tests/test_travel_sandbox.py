"""The sandbox provider: determinism (golden values, across processes), realism, lookups by id."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, datetime
from pathlib import Path

import pytest

from tools.travel.geo import Gazetteer
from tools.travel.provider import FlightQuery, TrainQuery
from tools.travel.sandbox import SandboxProvider

DAY = date(2025, 5, 2)
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sb() -> SandboxProvider:
    return SandboxProvider(Gazetteer.load())


def _tq(sb: SandboxProvider, a: str, b: str, day: date = DAY) -> TrainQuery:
    ca, cb = sb.gazetteer.resolve_city(a), sb.gazetteer.resolve_city(b)
    return TrainQuery(ca, cb, day, ca.stations, cb.stations)


def _fq(sb: SandboxProvider, a: str, b: str, day: date = DAY) -> FlightQuery:
    ca, cb = sb.gazetteer.resolve_city(a), sb.gazetteer.resolve_city(b)
    return FlightQuery(ca, cb, day, ca.airports, cb.airports)


def _snapshot(sb: SandboxProvider) -> str:
    g = sb.gazetteer
    trains = sb.trains.direct(g.city("beijing").stations, g.city("shanghai").stations, DAY)
    flights = sb.flights.direct(("PEK", "PKX"), ("PVG", "SHA"), DAY)
    hotels = sb.hotels.list(g.city("hangzhou"), DAY, date(2025, 5, 4))
    return json.dumps([t.model_dump() for t in trains[:3]] + [f.model_dump() for f in flights[:3]]
                      + [h.model_dump() for h in hotels[:3]], ensure_ascii=False, sort_keys=True)


def test_golden_values(sb: SandboxProvider) -> None:
    # If the data files or the generators change on purpose, update these values in the same commit.
    trains = sb.trains.direct(*[sb.gazetteer.city(c).stations for c in ("beijing", "shanghai")], DAY)
    first_g = next(t for t in trains if t.number.startswith("G"))
    assert (first_g.number, first_g.depart, first_g.arrive) == ("G1710", "2025-05-02 07:35", "2025-05-02 13:01")
    flights = sb.flights.direct(("PEK", "PKX"), ("PVG", "SHA"), DAY)
    assert (flights[0].number, flights[0].depart, flights[0].price) == ("FM4739", "2025-05-02 07:10", 1100.0)
    hotel = sb.hotels.list(sb.gazetteer.city("hangzhou"), DAY, date(2025, 5, 4))[0]
    assert (hotel.hotel_id, hotel.name) == ("H-hangzhou-001", "亚朵酒店(杭州龙井村店)")


def test_same_answer_in_another_process(sb: SandboxProvider) -> None:
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.test_travel_sandbox import _snapshot;"
            "from tools.travel.sandbox import SandboxProvider; from tools.travel.geo import Gazetteer;"
            "print(_snapshot(SandboxProvider(Gazetteer.load())))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert out.stdout.strip() == _snapshot(sb)


def test_beijing_shanghai_high_speed_is_about_five_hours(sb: SandboxProvider) -> None:
    trains = sb.trains.direct(*[sb.gazetteer.city(c).stations for c in ("beijing", "shanghai")], DAY)
    g_trains = [t for t in trains if t.number.startswith("G")]
    assert len(g_trains) >= 5
    for t in g_trains:
        assert 4.5 * 60 <= t.duration_min <= 6 * 60, t
        assert t.from_station == "北京南" and t.to_station == "上海虹桥"
        second = next(s for s in t.seats if s.seat == "二等座")
        assert 450 <= second.price <= 700
    assert all("硬卧" in {s.seat for s in t.seats} for t in trains if t.number[0] == "Z")


def test_pek_sha_flight_is_about_two_hours(sb: SandboxProvider) -> None:
    flights = sb.flights.direct(("PEK",), ("SHA",), DAY)
    assert flights
    for f in flights:
        assert 120 <= f.duration_min <= 150
        assert 300 <= f.price <= 2000
        assert f.depart.startswith("2025-05-02")


def test_flight_times_are_local(sb: SandboxProvider) -> None:
    f = sb.flights.direct(("PEK", "PKX"), ("CDG",), DAY)[0]
    dep, arr = datetime.strptime(f.depart, "%Y-%m-%d %H:%M"), datetime.strptime(f.arrive, "%Y-%m-%d %H:%M")
    # Paris is 6 hours behind Beijing in May: the clock difference is the block time minus 6 h
    assert (arr - dep).total_seconds() / 60 == f.duration_min - 6 * 60


def test_taxi_fares_are_plausible(sb: SandboxProvider) -> None:
    g = sb.gazetteer
    bj, sh = g.city("beijing"), g.city("shanghai")
    airport = sb.routes.plan(g.resolve_place("PEK", bj), g.resolve_place("天安门广场", bj), bj)
    taxi = next(m for m in airport.modes if m.mode == "taxi")
    assert 80 <= taxi.cost <= 160 and 25 <= taxi.distance_km <= 45
    short = sb.routes.plan(g.resolve_place("外滩", sh), g.resolve_place("豫园", sh), sh)
    taxi = next(m for m in short.modes if m.mode == "taxi")
    assert 14 <= taxi.cost <= 25
    assert any(m.mode == "walk" for m in short.modes)


async def test_transfers(sb: SandboxProvider) -> None:
    found = await sb.trains.train_transfers(_tq(sb, "北京", "乌鲁木齐"), None, 10)
    assert found.items and found.source == "sandbox"
    for t in found.items:
        first, second = t.legs
        assert first.from_city == "北京" and second.to_city == "乌鲁木齐"
        assert first.arrive <= second.depart and t.wait_min >= 20
    via = sb.gazetteer.resolve_city("南京")
    found = await sb.trains.train_transfers(_tq(sb, "北京", "上海"), via, 5)
    assert found.items and all(t.legs[0].to_city == "南京" for t in found.items)
    flights = await sb.flights.flight_transfers(_fq(sb, "拉萨", "东京"), 5)
    assert flights.items and all(len(t.legs) == 2 and t.layover_min >= 60 for t in flights.items)


def test_lookup_by_id(sb: SandboxProvider) -> None:
    g = sb.gazetteer
    train = sb.trains.direct(g.city("beijing").stations, g.city("nanjing").stations, DAY)[0]
    again = sb.get_train(train.number, DAY, train.from_station, train.to_station)
    assert again == train
    assert sb.get_train("G99999", DAY) is None
    flight = sb.flights.direct(("PEK",), ("SHA",), DAY)[0]
    assert sb.get_flight(flight.number, DAY, "PEK", "SHA") == flight
    hotel = sb.hotels.list(g.city("chengdu"), DAY, date(2025, 5, 3))[5]
    assert sb.get_hotel(hotel.hotel_id, DAY, date(2025, 5, 3)) == hotel
    assert sb.get_hotel("H-nowhere-001", DAY, date(2025, 5, 3)) is None
    poi = sb.get_poi("POI-beijing-01")
    assert poi is not None and poi.name == "故宫博物院"
    eatery = sb.places.nearby(g.resolve_place("故宫", g.city("beijing")), 800, "餐厅", 3)[0]
    assert sb.get_poi(eatery.poi_id) == eatery.model_copy(update={"distance_m": None})


def test_dates_change_prices_not_timetables(sb: SandboxProvider) -> None:
    g = sb.gazetteer
    a = sb.trains.direct(g.city("beijing").stations, g.city("shanghai").stations, date(2025, 5, 2))
    b = sb.trains.direct(g.city("beijing").stations, g.city("shanghai").stations, date(2031, 1, 9))
    assert [t.number for t in a] == [t.number for t in b]
    assert [t.depart[11:] for t in a] == [t.depart[11:] for t in b]
    fa = sb.flights.direct(("PEK",), ("SHA",), date(2025, 5, 2))
    fb = sb.flights.direct(("PEK",), ("SHA",), date(2025, 5, 6))
    assert [f.number for f in fa] == [f.number for f in fb] and [f.price for f in fa] != [f.price for f in fb]


def test_web_is_offline_and_says_so(sb: SandboxProvider) -> None:
    hits = sb.web.find("12306 购票", 3)
    assert hits and "12306" in hits[0].title
    assert sb.web.find("zzzz qqqq", 3) == []
