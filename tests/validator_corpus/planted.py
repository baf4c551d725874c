"""The planted-fault corpus of issue 15: on routes the first corpus does not cover, the offline
planner's own runs on the sandbox (its plan, its answer text and its whole conversation, tool
results included), and copies of each with exactly one planted fault of one kind.

    .venv/bin/python -m tests.validator_corpus.planted            # rewrites planted/*.json
    .venv/bin/python -m tests.validator_corpus.planted --report   # the per-kind table for the README

Each planted/<route>.json: {"route", "request", "today", "plan", "text", "messages", "cases"}; a
case is {"kind", "expected", "item", "request", "plan", "text", "note"}: `plan` None means the
answer was written only as text; `expected` is "ok" or the Category value a finding must have,
and `item` a part of that finding's item (the train number, hotel or POI id, the leg) — every
planted fault must be caught by a finding that names what was planted.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from agent_core.schema import Message
from agent_core.validator.evidence import RunEvidence
from agent_core.validator.findings import Category
from agent_core.validator.hours import closed_reason
from tests.validator_support import Sandbox, load_sandbox, offline_run, run_clock
from tools.plan import HotelStay, Leg, TripPlan, Visit
from tools.travel.geo import City, haversine_km
from tools.travel.models import Flight, Train

HERE = Path(__file__).parent / "planted"
TODAY = "2026-12-01"

# routes the first corpus (generate.py) does not have; {d} is the start date as the person wrote it
ROUTES: list[tuple[str, str, date]] = [
    ("hz_bj", "{d}从杭州去北京玩3天", date(2027, 3, 10)),
    ("cd_km_en", "{d} from Chengdu to Kunming, 3 days, 2 people", date(2027, 4, 14)),
    ("bj_sy_flight", "{d}从北京飞三亚玩4天", date(2027, 5, 20)),
    ("wh_cq", "{d}从武汉去重庆玩3天", date(2027, 4, 7)),
    ("xa_ly", "{d}从西安去洛阳玩2天", date(2027, 3, 24)),
    ("gz_xm_breakfast", "{d}从广州去厦门玩3天，酒店要含早餐", date(2027, 4, 21)),
    ("nj_hs_budget", "{d}从南京去黄山玩3天，预算3000", date(2027, 5, 12)),
    ("cs_zjj", "{d}从长沙去张家界玩2天", date(2027, 3, 31)),
    ("sz_gl_en", "{d} from Shenzhen to Guilin, 3 days", date(2027, 5, 5)),
    ("sh_qd_flight", "{d}从上海去青岛玩3天，坐飞机", date(2027, 4, 28)),
    ("tj_dl_overnight", "{d}从天津去大连玩3天", date(2027, 6, 2)),
    ("hz_xm_en", "{d} from Hangzhou to Xiamen for 3 days, 2 people", date(2027, 6, 9)),
]


def zh_date(d: date) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def en_date(d: date) -> str:
    return d.strftime("%B %-d %Y")


def written(template: str, d: date) -> str:
    return template.format(d=zh_date(d) if "从" in template else en_date(d))


@dataclass
class Base:
    route: str
    request: str
    start: date
    plan: TripPlan
    text: str
    messages: list[Message]
    evidence: RunEvidence = field(init=False)

    def __post_init__(self) -> None:
        self.evidence = RunEvidence.from_messages(self.messages)

    @property
    def zh(self) -> bool:
        return "从" in self.request

    def copy(self) -> TripPlan:
        return self.plan.model_copy(deep=True)


@dataclass(frozen=True)
class Case:
    expected: str  # "ok" or a Category value
    item: str  # part of the finding's item
    plan: TripPlan | None
    text: str
    request: str
    note: str


Fault = Callable[[Sandbox, Base], Case | None]


# -- helpers ------------------------------------------------------------------------------------
def retotal(plan: TripPlan) -> TripPlan:
    plan.total_cost = plan.computed_total()
    return plan


def fmt(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def at(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M")


def city_of(sb: Sandbox, name: str) -> City:
    return sb.gazetteer.resolve_city(name)


def rooms(plan: TripPlan) -> int:
    return max(1, math.ceil(plan.travellers / 2))


def unused_number(sb: Sandbox, kind: str, prefix: str, day: date) -> str:
    for n in range(9989, 1000, -7):
        number = f"{prefix}{n}"
        exists = sb.provider.get_train(number, day) if kind == "train" else sb.provider.get_flight(number, day)
        if exists is None:
            return number
    raise RuntimeError("no free number")


def prefix_of(leg: Leg) -> str:
    return "".join(ch for ch in (leg.number or "G") if not ch.isdigit())[:2] or "G"


def real_rides(sb: Sandbox, leg: Leg) -> list[Train | Flight]:
    """Every ride the sandbox has on the leg's day between the leg's cities."""
    day = date.fromisoformat(leg.depart[:10])
    a, b = city_of(sb, leg.origin_city or leg.origin), city_of(sb, leg.destination_city or leg.destination)
    if leg.kind == "train":
        return list(sb.provider.trains.direct(a.stations, b.stations, day))
    return list(sb.provider.flights.direct(a.airports, b.airports, day))


def ride_not_in_run(sb: Sandbox, base: Base, leg: Leg) -> Train | Flight | None:
    """A real ride the run's search did not return, leaving as close as can be to the leg's."""
    returned = set(base.evidence.rides)
    dep = at(leg.depart)
    options = [r for r in real_rides(sb, leg) if r.number.upper() not in returned
               and any(s.left > 0 for s in (r.seats if isinstance(r, Train) else r.cabins))]
    options.sort(key=lambda r: (at(r.arrive) > at(leg.arrive), abs((at(r.depart) - dep).total_seconds())))
    return options[0] if options else None


def put_ride(plan: TripPlan, leg: Leg, ride: Train | Flight) -> None:
    seats = ride.seats if isinstance(ride, Train) else ride.cabins
    open_seats = [s for s in seats if s.left > 0] or seats
    seat = next((s for s in open_seats if s.seat == leg.seat), open_seats[0])
    leg.number, leg.depart, leg.arrive, leg.source_id = ride.number, ride.depart, ride.arrive, ride.number
    if isinstance(ride, Train):
        leg.origin, leg.destination = ride.from_station, ride.to_station
    else:
        leg.origin, leg.destination, leg.airline = ride.from_airport, ride.to_airport, ride.airline
    leg.seat, leg.price = seat.seat, seat.price * plan.travellers


def hotel_stay(plan: TripPlan, like: HotelStay, hotel: Any, city: str) -> HotelStay:
    rate = hotel.price * rooms(plan)
    return HotelStay(hotel_id=hotel.hotel_id, name=hotel.name, city=city, checkin_date=like.checkin_date,
                     checkout_date=like.checkout_date, nights=like.nights, price_per_night=rate,
                     total=rate * like.nights, breakfast=hotel.has_breakfast)


def fitting_visit(sb: Sandbox, city: City, like: Visit, exclude: set[str], city_label: str) -> Visit | None:
    """A sight of `city` (not in `exclude`) open for the whole of `like`'s slot."""
    for poi in sb.gazetteer.pois_in(city):
        if poi.id in exclude or poi.category in ("火车站", "机场", "美食", "酒店"):
            continue
        v = Visit(poi_id=poi.id, name=poi.name_zh, city=city_label, date=like.date, start=like.start,
                  duration_min=like.duration_min, ticket_price=poi.price)
        if closed_reason(poi.hours, v) is None:
            return v
    return None


def shifted(request: str, d: date, days: int) -> str:
    return request.replace(zh_date(d), zh_date(d + timedelta(days=days))).replace(en_date(d), en_date(d + timedelta(days=days)))


def added(base: Base, zh: str, en: str) -> str:
    return base.request + (zh if base.zh else en)


def line_of(text: str, needle: str) -> str | None:
    return next((ln for ln in text.splitlines() if needle in ln), None)


def far_sight(sb: Sandbox, base: Base, leg: Leg, *, nearest: bool = False) -> tuple[Visit | None, float]:
    """The run's sight farthest from (or nearest to) where the leg arrives, and its distance."""
    end = sb.facts().spot(leg.destination, leg.destination_city)
    if end is None:
        return None, 0.0
    best: tuple[float, Any] | None = None
    for poi in base.evidence.pois.values():
        p = sb.gazetteer.poi(poi.poi_id)
        if p is None or p.category in ("火车站", "机场"):
            continue
        km = haversine_km(end.lat, end.lon, p.lat, p.lon)
        if best is None or (km < best[0] if nearest else km > best[0]):
            best = (km, p)
    if best is None:
        return None, 0.0
    km, p = best
    return Visit(poi_id=p.id, name=p.name_zh, city=base.plan.destination_city, date=leg.arrive[:10]), km


def city_leg(kind: str, origin: str, destination: str, dep: datetime, arr: datetime, city: str) -> Leg:
    return Leg(kind=kind, origin=origin, destination=destination, origin_city=city, destination_city=city,  # type: ignore[arg-type]
               depart=fmt(dep), arrive=fmt(arr))


# -- faults in the facts (FACT): the run, the provider, sums, currency ---------------------------
FACT, LOGIC, CONSTRAINT, NEED, INCOMPLETE = (c.value for c in
                                             (Category.FACT, Category.LOGIC, Category.CONSTRAINT, Category.NEED, Category.INCOMPLETE))


def f_ride_not_in_run(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    ride = ride_not_in_run(sb, base, plan.legs[0])
    if ride is None:
        return None
    put_ride(plan, plan.legs[0], ride)
    return Case(FACT, ride.number, retotal(plan), base.text, base.request,
                f"the way there is {ride.number}, a real ride this run's search never returned")


def f_wrong_departure_time(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[0]
    leg.depart = fmt(at(leg.depart) - timedelta(minutes=37))
    return Case(FACT, leg.number or "", plan, base.text, base.request, "the way there leaves 37 minutes before its real time")


def f_wrong_arrival_time(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[-1]
    leg.arrive = fmt(at(leg.arrive) + timedelta(minutes=23))
    return Case(FACT, leg.number or "", plan, base.text, base.request, "the way home arrives 23 minutes after its real time")


def f_wrong_station(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[0]
    city = city_of(sb, leg.origin_city or leg.origin)
    if leg.kind == "train":
        others = [s for s in city.stations if s != leg.origin.removesuffix("站")]
    else:
        others = [a.name_zh for a in sb.gazetteer.find_airports(city) if a.name_zh != leg.origin]
    if not others:
        return None
    leg.origin = others[0]
    return Case(FACT, leg.number or "", plan, base.text, base.request, f"the way there starts at {others[0]}, another station of the city")


def f_wrong_fare(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[-1]
    leg.price += 57 * plan.travellers
    return Case(FACT, leg.number or "", retotal(plan), base.text, base.request, "the way home costs 57 CNY a head more than its fare")


def f_seat_not_offered(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[0]
    day = date.fromisoformat(leg.depart[:10])
    ride = sb.provider.get_train(leg.number or "", day) if leg.kind == "train" else sb.provider.get_flight(leg.number or "", day)
    if ride is None:
        return None
    offered = {s.seat for s in (ride.seats if isinstance(ride, Train) else ride.cabins)}
    choices = ["商务座", "一等座", "二等座", "硬座", "软座", "硬卧", "软卧"] if leg.kind == "train" else ["头等舱", "公务舱", "经济舱"]
    missing = [c for c in choices if c not in offered]
    if not missing or (leg.kind == "flight" and len(offered) == 1):
        return None
    leg.seat = missing[0]
    return Case(FACT, leg.number or "", plan, base.text, base.request, f"the way there is booked in {missing[0]}, which it does not have")


def f_invented_ride(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[0]
    leg.number = leg.source_id = unused_number(sb, leg.kind, prefix_of(leg), date.fromisoformat(leg.depart[:10]))
    return Case(FACT, leg.number, plan, base.text, base.request, "the way there has a number no timetable has")


def f_hotel_not_in_run(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    city = city_of(sb, stay.city)
    cin, cout = date.fromisoformat(stay.checkin_date), date.fromisoformat(stay.checkout_date)
    options = [h for h in sb.provider.hotels.list(city, cin, cout)
               if h.hotel_id not in base.evidence.hotels and h.rooms_left > 0 and (h.has_breakfast or not stay.breakfast)]
    if not options:
        return None
    plan.stays[0] = hotel_stay(plan, stay, options[0], stay.city)
    return Case(FACT, options[0].hotel_id, retotal(plan), base.text, base.request,
                "the hotel is a real one of the city that hotel_search never returned in this run")


def f_hotel_wrong_rate(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    stay.price_per_night += 40
    stay.total = stay.price_per_night * stay.nights
    return Case(FACT, stay.hotel_id, retotal(plan), base.text, base.request, "the hotel costs 40 CNY a night more than its rate")


def f_hotel_wrong_name(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    plan.stays[0].name = "云栖华庭大酒店"
    return Case(FACT, plan.stays[0].hotel_id, plan, base.text, base.request, "the hotel's id is real, its name is not")


def f_hotel_invented(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    stay.hotel_id = f"H-{city_of(sb, stay.city).id}-987"
    stay.name = "云栖华庭大酒店"
    return Case(FACT, stay.hotel_id, plan, base.text, base.request, "the hotel exists nowhere")


def f_sight_not_in_run(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    city = city_of(sb, plan.destination_city)
    for k, old in enumerate(plan.visits):
        v = fitting_visit(sb, city, old, set(base.evidence.pois), old.city)
        if v is not None:
            plan.visits[k] = v
            return Case(FACT, v.poi_id, retotal(plan), base.text, base.request, f"{v.name} is a real sight poi_search never returned in this run")
    return None


def f_sight_wrong_ticket(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    v = plan.visits[-1]
    v.ticket_price += 30
    return Case(FACT, v.poi_id, retotal(plan), base.text, base.request, "a ticket costs 30 CNY more than the sight charges")


def f_sight_invented(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    v = plan.visits[0]
    v.poi_id, v.name = f"POI-{city_of(sb, v.city).id}-97", "星河奇幻乐园"
    return Case(FACT, v.poi_id, plan, base.text, base.request, "a sight that exists nowhere")


def f_total_mismatch(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    plan.total_cost = round(plan.total_cost - 180, 2)
    return Case(FACT, "total_cost", plan, base.text, base.request, "the total is 180 CNY short of its parts")


def f_stay_total_mismatch(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    stay.total -= 100
    return Case(FACT, stay.hotel_id, retotal(plan), base.text, base.request, "the hotel's total is not its nights times its rate")


def f_currency_mismatch(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    plan.currency = "USD"
    return Case(FACT, "currency", plan, base.text, base.request, "the plan says USD; its amounts are the tools' CNY prices")


def f_text_currency(sb: Sandbox, base: Base) -> Case | None:
    total = f"{base.plan.total_cost:g}"
    for old, new in ((f"合计约 {total} 元", f"合计约 ${total}"), (f"Total about {total} CNY", f"Total about ${total}")):
        if old in base.text:
            return Case(FACT, "reply", base.copy(), base.text.replace(old, new), base.request, "the reply gives the total in dollars")
    return None


# -- faults in the physics of a leg (LOGIC) ------------------------------------------------------
def f_drive_too_fast(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    leg = plan.legs[0]
    arrive = at(leg.arrive)
    plan.legs[0] = Leg(kind="drive", origin=plan.origin_city, destination=leg.destination, origin_city=leg.origin_city,
                       destination_city=leg.destination_city, depart=fmt(arrive - timedelta(minutes=60)), arrive=leg.arrive)
    return Case(LOGIC, "legs[0] drive", retotal(plan), base.text, base.request, "the way there is a 60-minute drive between the cities")


def _inserted(sb: Sandbox, base: Base, kind: str, minutes: int, need_km: float, *, nearest: bool = False,
              start: datetime | None = None) -> Case | None:
    plan = base.copy()
    first = plan.legs[0]
    sight, km = far_sight(sb, base, first, nearest=nearest)
    if sight is None or (not nearest and km < need_km) or (nearest and km > need_km):
        return None
    dep = start or at(first.arrive) + timedelta(minutes=5)
    leg = city_leg(kind, first.destination, sight.poi_id, dep, dep + timedelta(minutes=minutes), first.destination_city or plan.destination_city)
    leg.destination = sight.name
    plan.legs.insert(1, leg)
    return Case(LOGIC, f"legs[1] {kind}", plan, base.text, base.request,
                f"a {kind} of {km:.0f} km from {first.destination} to {sight.name} taking {minutes} min")


def f_taxi_too_fast(sb: Sandbox, base: Base) -> Case | None:
    return _inserted(sb, base, "taxi", 3, 15)


def f_walk_too_fast(sb: Sandbox, base: Base) -> Case | None:
    return _inserted(sb, base, "walk", 10, 8)


def f_transit_too_slow(sb: Sandbox, base: Base) -> Case | None:
    night = datetime.combine(at(base.plan.legs[0].arrive).date(), datetime.min.time()) + timedelta(hours=22)
    return _inserted(sb, base, "transit", 270, 15, nearest=True, start=night)


def f_arrives_before_it_leaves(sb: Sandbox, base: Base) -> Case | None:
    case = _inserted(sb, base, "taxi", 30, 0)
    if case is None or case.plan is None:
        return None
    leg = case.plan.legs[1]
    leg.arrive = fmt(at(leg.depart) - timedelta(minutes=20))
    return Case(LOGIC, "legs[1] taxi", case.plan, case.text, case.request, "a taxi that arrives 20 minutes before it leaves")


# -- faults in where the person is (LOGIC) -------------------------------------------------------
def homeward(plan: TripPlan) -> Leg:
    return plan.legs[-1]


def f_visit_after_homeward(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    back = homeward(plan)
    v = plan.visits[-1]
    start = at(back.depart) + timedelta(minutes=30)
    v.date, v.start = start.strftime("%Y-%m-%d"), start.strftime("%H:%M")
    return Case(LOGIC, v.poi_id, plan, base.text, base.request, f"{v.name} is visited after the ride home has left")


def f_home_sight_after_return(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    back = homeward(plan)
    home = city_of(sb, plan.origin_city)
    start = at(back.arrive) + timedelta(minutes=40)
    for poi in sb.gazetteer.pois_in(home):
        if poi.category in ("火车站", "机场", "美食", "酒店"):
            continue
        v = Visit(poi_id=poi.id, name=poi.name_zh, city=plan.origin_city, date=start.strftime("%Y-%m-%d"),
                  start=start.strftime("%H:%M"), duration_min=60, ticket_price=poi.price)
        plan.visits.append(v)
        return Case(LOGIC, v.poi_id, retotal(plan), base.text, base.request, f"{v.name}, at home, after the trip's ride home")
    return None


def f_visit_after_trip(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    v = plan.visits[-1]
    v.date = (date.fromisoformat(plan.end_date) + timedelta(days=1)).isoformat()
    return Case(LOGIC, v.poi_id, plan, base.text, base.request, "a sight on the day after the trip ends")


def f_visit_before_trip(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    v = plan.visits[0]
    v.date = (date.fromisoformat(plan.start_date) - timedelta(days=1)).isoformat()
    return Case(LOGIC, v.poi_id, plan, base.text, base.request, "a sight on the day before the trip starts")


def f_visit_in_other_city(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    later = [k for k, v in enumerate(plan.visits) if v.date != plan.start_date]
    if not later:
        return None
    k = later[0]
    v = fitting_visit(sb, city_of(sb, plan.origin_city), plan.visits[k], set(), plan.origin_city)
    if v is None:
        return None
    plan.visits[k] = v
    return Case(LOGIC, v.poi_id, retotal(plan), base.text, base.request, f"{v.name} is in the home city while the person is away")


def f_stay_outside_trip(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    stay.checkout_date = (date.fromisoformat(stay.checkout_date) + timedelta(days=1)).isoformat()
    stay.nights += 1
    stay.total = stay.price_per_night * stay.nights
    return Case(LOGIC, stay.hotel_id, retotal(plan), base.text, base.request, "the hotel is booked a night past the trip")


def f_stay_in_other_city(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    home = city_of(sb, plan.origin_city)
    cin, cout = date.fromisoformat(stay.checkin_date), date.fromisoformat(stay.checkout_date)
    hotels = [h for h in sb.provider.hotels.list(home, cin, cout) if h.rooms_left > 0 and (h.has_breakfast or not stay.breakfast)]
    if not hotels:
        return None
    plan.stays[0] = hotel_stay(plan, stay, hotels[0], plan.origin_city)
    return Case(LOGIC, hotels[0].hotel_id, retotal(plan), base.text, base.request, "the nights are booked in the home city")


def f_overlapping_visits(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if len(plan.visits) < 2:
        return None
    a, b = plan.visits[0], plan.visits[1]
    start = at(f"{a.date} {a.start}") + timedelta(minutes=10)
    b.date, b.start = a.date, start.strftime("%H:%M")
    return Case(LOGIC, b.poi_id, plan, base.text, base.request, "two sights at once")


def f_visit_during_ride(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.visits:
        return None
    v = plan.visits[0]
    start = at(plan.legs[0].depart) + timedelta(minutes=20)
    v.date, v.start, v.duration_min = start.strftime("%Y-%m-%d"), start.strftime("%H:%M"), 30
    return Case(LOGIC, v.poi_id, plan, base.text, base.request, "a sight while the person is on the way there")


def f_visit_when_closed(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    for v in plan.visits:
        poi = sb.gazetteer.poi(v.poi_id)
        if poi is None or v.date == plan.start_date:
            continue
        trial = v.model_copy(update={"start": "04:30", "duration_min": 30})
        if closed_reason(poi.hours, trial) is not None:
            v.start, v.duration_min = "04:30", 30
            return Case(LOGIC, v.poi_id, plan, base.text, base.request, f"{v.name} at 04:30, before it opens")
    return None


def f_too_short_transfer(sb: Sandbox, base: Base) -> Case | None:
    """The last sight before the way home ends 10 minutes before it leaves, across town."""
    plan = base.copy()
    back = homeward(plan)
    last_day = back.depart[:10]
    city = city_of(sb, plan.destination_city)
    dep = at(back.depart)
    origin = sb.facts().spot(back.origin, back.origin_city)
    for poi in sb.gazetteer.pois_in(city):
        if poi.category in ("火车站", "机场", "美食", "酒店") or any(v.poi_id == poi.id for v in plan.visits):
            continue
        if origin is not None and haversine_km(origin.lat, origin.lon, poi.lat, poi.lon) < 3:
            continue
        start = dep - timedelta(minutes=10 + poi.visit_min)
        v = Visit(poi_id=poi.id, name=poi.name_zh, city=plan.destination_city, date=last_day,
                  start=start.strftime("%H:%M"), duration_min=poi.visit_min, ticket_price=poi.price)
        if start.date() != dep.date() or closed_reason(poi.hours, v) is not None:
            continue
        plan.visits = [x for x in plan.visits if x.date != last_day]
        plan.visits.append(v)
        return Case(LOGIC, back.number or "", retotal(plan), base.text, base.request, f"{poi.name_zh} ends 10 minutes before the ride home, across town")
    return None


# -- the person's constraints and needs, and missing parts ----------------------------------------
def f_over_budget(sb: Sandbox, base: Base) -> Case | None:
    budget = int(base.plan.total_cost * 0.6)
    request = re.sub(r"预算\d+", f"预算{budget}", base.request) if "预算" in base.request else added(base, f"，预算{budget}元", f", budget {budget} CNY")
    return Case(CONSTRAINT, "total_cost", base.copy(), base.text, request, f"the person's budget is {budget} CNY")


def f_forbidden_transport(sb: Sandbox, base: Base) -> Case | None:
    if any(w in base.request for w in ("不坐", "坐飞机", "坐高铁", "飞")):
        return None
    kind = base.plan.legs[0].kind
    request = added(base, "，不坐高铁" if kind == "train" else "，不坐飞机", ", no trains" if kind == "train" else ", no flights")
    return Case(CONSTRAINT, base.plan.legs[0].number or "", base.copy(), base.text, request, f"the person will not go by {kind}")


def f_wrong_start_date(sb: Sandbox, base: Base) -> Case | None:
    return Case(CONSTRAINT, base.plan.legs[0].number or "", base.copy(), base.text, shifted(base.request, base.start, -1),
                "the person asked to leave the day before")


def f_missing_return_leg(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    plan.legs = plan.legs[:1]
    return Case(INCOMPLETE, "legs", retotal(plan), base.text, base.request, "there is no way home")


def f_missing_night(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    stay = plan.stays[0]
    if stay.nights == 1:
        plan.stays = []
    else:
        stay.nights -= 1
        stay.checkout_date = (date.fromisoformat(stay.checkout_date) - timedelta(days=1)).isoformat()
        stay.total = stay.price_per_night * stay.nights
    return Case(INCOMPLETE, "stays", retotal(plan), base.text, base.request, "the last night has no bed")


def f_wrong_travellers(sb: Sandbox, base: Base) -> Case | None:
    request = re.sub(r"\b2 people\b", "3 people", base.request) if "2 people" in base.request else added(base, "，3人同行", ", 3 people")
    return Case(NEED, "travellers", base.copy(), base.text, request, "three people travel; the plan is for fewer")


def f_breakfast_left_out(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays:
        return None
    plan.stays[0].breakfast = False
    request = base.request if "早餐" in base.request else added(base, "，酒店要含早餐", ", hotel with breakfast")
    return Case(NEED, plan.stays[0].hotel_id, plan, base.text, request, "the person wants breakfast; the stay leaves it out")


def f_breakfast_claimed(sb: Sandbox, base: Base) -> Case | None:
    plan = base.copy()
    if not plan.stays or plan.stays[0].breakfast is not False:
        return None
    plan.stays[0].breakfast = True
    return Case(FACT, plan.stays[0].hotel_id, plan, base.text, base.request, "breakfast is promised at a hotel that has none")


# -- an answer written only as text (no structured plan) ------------------------------------------
def _text_case(base: Base, old: str, new: str, item: str, note: str, *, within: str | None = None) -> Case | None:
    line = line_of(base.text, within or old)
    if line is None or old not in line:
        return None
    text = base.text.replace(line, line.replace(old, new, 1), 1)
    return Case(FACT, item, None, text, base.request, note)


def f_text_invented_ride(sb: Sandbox, base: Base) -> Case | None:
    leg = base.plan.legs[0]
    number = unused_number(sb, leg.kind, prefix_of(leg), date.fromisoformat(leg.depart[:10]))
    return _text_case(base, leg.number or "", number, number, "text only: the way there has a number no tool returned")


def f_text_ride_not_in_run(sb: Sandbox, base: Base) -> Case | None:
    leg = base.plan.legs[0]
    ride = ride_not_in_run(sb, base, leg)
    if ride is None:
        return None
    return _text_case(base, leg.number or "", ride.number, ride.number, "text only: a real ride this run never returned")


def f_text_wrong_time(sb: Sandbox, base: Base) -> Case | None:
    leg = base.plan.legs[0]
    old = leg.depart[11:16]
    new = (at(leg.depart) - timedelta(minutes=37)).strftime("%H:%M")
    return _text_case(base, old, new, leg.number or "", "text only: the way there leaves 37 minutes early", within=leg.number)


def f_text_wrong_price(sb: Sandbox, base: Base) -> Case | None:
    leg = base.plan.legs[0]
    line = line_of(base.text, leg.number or "")
    if line is None:
        return None
    m = re.search(r"(\d+(?:\.\d+)?)\s?(元|CNY)", line)
    if m is None:
        return None
    new = f"{float(m.group(1)) + 57:g}"
    return _text_case(base, m.group(0), f"{new}{' ' if m.group(0)[len(m.group(1))] == ' ' else ''}{m.group(2)}", leg.number or "",
                      "text only: the way there costs 57 CNY more than its fare", within=leg.number)


def f_text_invented_hotel(sb: Sandbox, base: Base) -> Case | None:
    if not base.plan.stays:
        return None
    name = "云栖华庭酒店(市中心店)"
    return _text_case(base, base.plan.stays[0].name, name, "云栖华庭酒店", "text only: a hotel no tool returned")


def f_text_hotel_wrong_price(sb: Sandbox, base: Base) -> Case | None:
    if not base.plan.stays:
        return None
    stay = base.plan.stays[0]
    line = line_of(base.text, stay.name)
    m = re.search(r"(\d+(?:\.\d+)?)\s?(元|CNY)", line or "")
    if line is None or m is None:
        return None
    new = f"{float(m.group(1)) + 33:g}"
    return _text_case(base, m.group(0), f"{new}{' ' if m.group(0)[len(m.group(1))] == ' ' else ''}{m.group(2)}", stay.name,
                      "text only: the hotel costs 33 CNY more than its rate", within=stay.name)


def f_text_ride_wrong_day(sb: Sandbox, base: Base) -> Case | None:
    leg = base.plan.legs[0]
    day = leg.depart[:10]
    later = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
    return _text_case(base, day, later, leg.number or "", "text only: the way there is dated the day after the run searched", within=leg.number)


FAULTS: list[tuple[str, Fault]] = [
    # grounding in the run, the provider, sums, currency
    ("ride_not_in_run", f_ride_not_in_run),
    ("wrong_departure_time", f_wrong_departure_time),
    ("wrong_arrival_time", f_wrong_arrival_time),
    ("wrong_station", f_wrong_station),
    ("wrong_fare", f_wrong_fare),
    ("seat_not_offered", f_seat_not_offered),
    ("invented_ride", f_invented_ride),
    ("hotel_not_in_run", f_hotel_not_in_run),
    ("hotel_wrong_rate", f_hotel_wrong_rate),
    ("hotel_wrong_name", f_hotel_wrong_name),
    ("hotel_invented", f_hotel_invented),
    ("breakfast_claimed", f_breakfast_claimed),
    ("sight_not_in_run", f_sight_not_in_run),
    ("sight_wrong_ticket", f_sight_wrong_ticket),
    ("sight_invented", f_sight_invented),
    ("total_mismatch", f_total_mismatch),
    ("stay_total_mismatch", f_stay_total_mismatch),
    ("currency_mismatch", f_currency_mismatch),
    ("text_currency", f_text_currency),
    # the physics of a leg
    ("drive_too_fast", f_drive_too_fast),
    ("taxi_too_fast", f_taxi_too_fast),
    ("walk_too_fast", f_walk_too_fast),
    ("transit_too_slow", f_transit_too_slow),
    ("arrives_before_it_leaves", f_arrives_before_it_leaves),
    # where the person is
    ("visit_after_homeward", f_visit_after_homeward),
    ("home_sight_after_return", f_home_sight_after_return),
    ("visit_after_trip", f_visit_after_trip),
    ("visit_before_trip", f_visit_before_trip),
    ("visit_in_other_city", f_visit_in_other_city),
    ("stay_outside_trip", f_stay_outside_trip),
    ("stay_in_other_city", f_stay_in_other_city),
    ("overlapping_visits", f_overlapping_visits),
    ("visit_during_ride", f_visit_during_ride),
    ("visit_when_closed", f_visit_when_closed),
    ("too_short_transfer", f_too_short_transfer),
    # the person's constraints and needs, missing parts
    ("over_budget", f_over_budget),
    ("forbidden_transport", f_forbidden_transport),
    ("wrong_start_date", f_wrong_start_date),
    ("missing_return_leg", f_missing_return_leg),
    ("missing_night", f_missing_night),
    ("wrong_travellers", f_wrong_travellers),
    ("breakfast_left_out", f_breakfast_left_out),
    # an answer written only as text
    ("text_invented_ride", f_text_invented_ride),
    ("text_ride_not_in_run", f_text_ride_not_in_run),
    ("text_wrong_time", f_text_wrong_time),
    ("text_wrong_price", f_text_wrong_price),
    ("text_ride_wrong_day", f_text_ride_wrong_day),
    ("text_invented_hotel", f_text_invented_hotel),
    ("text_hotel_wrong_price", f_text_hotel_wrong_price),
]


def clean_cases(base: Base) -> list[tuple[str, Case]]:
    """The plan as made (structured, and written only as text), and restatements it also keeps."""
    out = [("ok", Case("ok", "", base.copy(), base.text, base.request, "the planner's plan as it made it")),
           ("ok_text", Case("ok", "", None, base.text, base.request, "the planner's answer text, with no structured plan"))]
    if "预算" not in base.request and "budget" not in base.request:
        budget = int(base.plan.total_cost * 1.3) + 1
        out.append(("ok_within_budget", Case("ok", "", base.copy(), base.text, added(base, f"，预算{budget}元", f", budget {budget} CNY"),
                                             "a budget the plan keeps")))
    kinds = {leg.kind for leg in base.plan.legs}
    if not any(w in base.request for w in ("不坐", "坐飞机", "坐高铁", "飞")):
        avoid = ("，不坐飞机", ", no flights") if kinds == {"train"} else ("，不坐火车", ", no trains")
        out.append(("ok_avoids_unused", Case("ok", "", base.copy(), base.text, added(base, *avoid), "a transport the plan does not use is ruled out")))
    return out


def serialise(case: Case, kind: str) -> dict[str, Any]:
    return {"kind": kind, "expected": case.expected, "item": case.item, "request": case.request,
            "plan": case.plan.model_dump() if case.plan is not None else None, "text": case.text, "note": case.note}


async def build() -> list[dict[str, Any]]:
    sb = load_sandbox()
    now = run_clock(TODAY)
    out = []
    for route, template, d in ROUTES:
        request = written(template, d)
        run = await offline_run(sb, request, now)
        if run.plan is None:
            raise RuntimeError(f"the offline planner made no plan for {request!r}")
        base = Base(route, request, d, run.plan, run.text, run.messages)
        cases = [serialise(c, k) for k, c in clean_cases(base)]
        for kind, fault in FAULTS:
            case = fault(sb, base)
            if case is not None:
                cases.append(serialise(case, kind))
        out.append({"route": route, "request": request, "today": TODAY, "plan": run.plan.model_dump(), "text": run.text,
                    "messages": [m.model_dump(exclude_none=True) for m in run.messages], "cases": cases})
    kinds = {c["kind"] for r in out for c in r["cases"] if c["expected"] != "ok"}
    missing = [k for k, _ in FAULTS if k not in kinds]
    if missing:
        raise RuntimeError(f"no route could carry the faults {missing}")
    return out


def load() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(HERE.glob("*.json"))]


def main() -> None:
    if "--report" in sys.argv:
        from tests.validator_corpus.planted_report import (
            report,  # the checks run over the stored corpus
        )
        print(asyncio.run(report()))
        return
    routes = asyncio.run(build())
    HERE.mkdir(exist_ok=True)
    for old in HERE.glob("*.json"):
        old.unlink()
    for r in routes:
        (HERE / f"{r['route']}.json").write_text(json.dumps(r, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    cases = [c for r in routes for c in r["cases"]]
    print(json.dumps({"routes": len(routes), "cases": len(cases), "ok": sum(c["expected"] == "ok" for c in cases),
                      "kinds": len({c["kind"] for c in cases if c["expected"] != "ok"})}))


if __name__ == "__main__":
    main()
