"""Choosing among the tools' results and writing the plan: rides, a hotel, a day-by-day schedule.

Prices in the plan are for the whole party (legs: fare x travellers; stays: nights x rooms x
rate; visits: one ticket, which TripPlan multiplies by travellers), so `total_cost` is exactly
`TripPlan.computed_total()`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Literal

from agent_core.offline.options import Hotel, Ride, Sight
from agent_core.offline.plan_text import length_words
from agent_core.offline.request import BUDGET_STARS
from agent_core.offline.texts import say
from tools.plan import HotelStay, Leg, TripPlan, Visit
from tools.travel.geo import haversine_km

_SEAT_ORDER = ("二等座", "一等座", "商务座", "硬卧", "软卧", "硬座", "无座")
_HOURS = re.compile(r"(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})")
_CLOSED = re.compile(r"周([一二三四五六日])(?:闭馆|闭园|闭|休)")
_OPEN_DAYS = re.compile(r"^\s*周([一二三四五六日]+)\s")  # "周六日 09:00-17:00": open on those days only
_WEEKDAYS = "一二三四五六日"
SIGHTS_PER_DAY = 3
ARRIVAL_SLACK_MIN = 60  # arriving up to an hour later is worth it when it is cheaper


@dataclass(slots=True)
class Choice:
    """What the planner picked, and the runners-up for the backup list."""

    out: Ride
    back: Ride | None
    hotel: Hotel | None
    out_backup: Ride | None = None
    back_backup: Ride | None = None
    hotel_backup: Hotel | None = None
    notes: list[str] = field(default_factory=list)


def seat_for(ride: Ride, wanted: str | None, cheapest: bool, avoid: frozenset[str] = frozenset()) -> tuple[str | None, float]:
    """The seat bought on `ride` and its fare: the one asked for, else the cheapest when cheaper
    was asked, else the usual class; never one the person refused (`avoid`) while another is sold."""
    if not ride.seats:
        return ride.seat, ride.price
    seats = [s for s in ride.seats if s[0] not in avoid] or list(ride.seats)
    ride = replace(ride, seats=tuple(seats)) if len(seats) != len(ride.seats) else ride
    offered = dict(ride.seats)
    if wanted and wanted in offered and not cheapest:
        return wanted, offered[wanted]
    if cheapest:
        name, price = min(ride.seats, key=lambda s: s[1])
        return name, price
    for name in _SEAT_ORDER:
        if name in offered:
            return name, offered[name]
    return ride.seats[0]


def _at(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M")


def pick_ride(rides: list[Ride], *, after: str | None, before: str | None, cheapest: bool,
              seat: str | None = None, arrive_by: str | None = None, avoid_seats: frozenset[str] = frozenset(),
              overnight: bool = True) -> tuple[Ride | None, Ride | None]:
    """The best ride and a backup: the earliest arrival, unless one arriving within the hour
    costs less in the seat we would buy (or simply the cheapest, when asked). `arrive_by`
    ("YYYY-MM-DD HH:MM"): rides arriving later are taken only when no other runs (the cheapest
    night train must not eat the first night the hotel is paid for)."""
    if arrive_by is not None:
        rides = [r for r in rides if r.arrive <= arrive_by] or rides
    if not overnight:  # "不要夜车": a ride that arrives the day it leaves, while there is one
        rides = [r for r in rides if r.arrive[:10] == r.depart[:10]] or rides
    if seat is not None and not cheapest:  # a seat class asked for: the rides that have it left
        rides = [r for r in rides if seat in dict(r.seats)] or rides
    if not rides:
        return None, None

    def clock(r: Ride) -> str:
        return r.depart[11:16]

    def fare(r: Ride) -> float:
        return seat_for(r, seat, cheapest, avoid_seats)[1]

    window = [r for r in rides if (after is None or clock(r) >= after) and (before is None or clock(r) <= before)]
    pool = window or rides
    fast = [r for r in pool if r.number[:1] in "GDC" or r.kind == "flight"] or pool
    if cheapest:
        ranked = sorted(pool, key=lambda r: (fare(r), r.arrive))
    else:
        by_arrival = sorted(fast, key=lambda r: (r.arrive, fare(r)))
        soon = _at(by_arrival[0].arrive) + timedelta(minutes=ARRIVAL_SLACK_MIN)
        close = sorted((r for r in by_arrival if _at(r.arrive) <= soon), key=lambda r: (fare(r), r.arrive))
        ranked = close + [r for r in by_arrival if r not in close] + [r for r in pool if r not in fast]
    best = ranked[0]
    backup = next((r for r in ranked[1:] if r.number != best.number), None)
    return best, backup


def pick_hotel(hotels: list[Hotel], *, cheapest: bool, stars: int | None, breakfast: bool | None,
               budget_per_night: float | None) -> tuple[Hotel | None, Hotel | None]:
    if not hotels:
        return None, None
    pool = [h for h in hotels if breakfast is None or h.breakfast == breakfast] or hotels
    if stars is not None and stars <= BUDGET_STARS:  # a budget hotel: the cheapest of the budget class
        pool = [h for h in pool if (h.stars or 0) <= BUDGET_STARS] or pool
        cheapest = True
    elif stars is not None:
        pool = [h for h in pool if (h.stars or 0) >= stars] or pool
    if budget_per_night is not None:
        pool = [h for h in pool if h.price <= budget_per_night] or sorted(pool, key=lambda h: h.price)[:1]
    if cheapest:
        ranked = sorted(pool, key=lambda h: (h.price, -(h.rating or 0)))
    else:
        # best value: rating per price, keeping some comfort
        ranked = sorted(pool, key=lambda h: (-(h.rating or 4.0) / math.log(h.price + 50), h.price))
    best = ranked[0]
    backup = next((h for h in ranked[1:] if h.hotel_id != best.hotel_id), None)
    return best, backup


def opening(sight: Sight, day: date) -> tuple[datetime, datetime] | None:
    """When `sight` is open on `day` (None: closed that day); places without hours are open all day."""
    if (m := _CLOSED.search(sight.hours)) and _WEEKDAYS.index(m.group(1)) == day.weekday():
        return None
    if (m := _OPEN_DAYS.match(sight.hours)) and _WEEKDAYS[day.weekday()] not in m.group(1):
        return None
    midnight = datetime.combine(day, datetime.min.time())
    if (h := _HOURS.search(sight.hours)) is None:
        return midnight, midnight + timedelta(days=1)
    opens = midnight + timedelta(hours=int(h.group(1)), minutes=int(h.group(2)))
    closes = midnight + timedelta(hours=int(h.group(3)), minutes=int(h.group(4)))
    if closes <= opens:
        closes += timedelta(days=1)  # open past midnight, e.g. 06:00-01:00
    return opens, closes


def _getting_there(a: Sight | None, b: Sight) -> timedelta:
    """Time from one sight to the next: by road at about 30 km/h, and never under 20 minutes."""
    if a is None or None in (a.lat, a.lon, b.lat, b.lon):
        return timedelta(0) if a is None else timedelta(minutes=40)
    km = haversine_km(a.lat or 0.0, a.lon or 0.0, b.lat or 0.0, b.lon or 0.0) * 1.3
    return timedelta(minutes=max(20, round(10 + km * 2)))


def _round_up(t: datetime, step_min: int = 10) -> datetime:
    extra = -(t.minute % step_min) % step_min
    return t.replace(second=0, microsecond=0) + timedelta(minutes=extra)


def schedule(sights: list[Sight], days: list[tuple[date, datetime, datetime]], city: str,
             cheapest: bool) -> list[Visit]:
    """Fill each day's free window with sights, in the tools' order (cheap first when asked); every
    visit starts after its place opens and ends before it closes."""
    pool = sorted(sights, key=lambda s: s.price) if cheapest else list(sights)
    visits: list[Visit] = []
    used: set[str] = set()
    for day, begin, end in days:
        cursor = begin
        per_day = 0
        last: Sight | None = None
        for s in pool:
            if s.poi_id in used or per_day >= SIGHTS_PER_DAY:
                continue
            hours = opening(s, day)
            if hours is None:
                continue
            start = _round_up(max(cursor + _getting_there(last, s), hours[0]))
            stop = start + timedelta(minutes=s.visit_min)
            if stop > min(end, hours[1]):
                continue
            visits.append(Visit(poi_id=s.poi_id, name=s.name, city=s.city or city, date=day.isoformat(),
                                start=start.strftime("%H:%M"), duration_min=s.visit_min, ticket_price=s.price))
            used.add(s.poi_id)
            per_day += 1
            cursor = stop
            last = s
    return visits


def leg_of(ride: Ride, seat: str | None, fare: float, travellers: int, origin_city: str, dest_city: str) -> Leg:
    return Leg(kind="train" if ride.kind == "train" else "flight", number=ride.number, origin=ride.origin,
               destination=ride.destination, origin_city=origin_city, destination_city=dest_city,
               depart=ride.depart, arrive=ride.arrive, seat=seat, airline=ride.airline,
               price=round(fare * travellers, 2), source_id=ride.source_id)


def build_plan(*, lang: str, origin: str, destination: str, start: date, nights: int, travellers: int,
               choice: Choice, sights: list[Sight], seat: str | None, cheapest: bool,
               alternatives: list[str], notes: list[str], sources: frozenset[str] = frozenset({"sandbox"}),
               busy_until: str | None = None, avoid_seats: frozenset[str] = frozenset()) -> TripPlan:
    """The plan of the rides, hotel and sights chosen; `busy_until` ("HH:MM"): the first day's
    sights wait until the person is free (they travel for an appointment)."""
    end = start + timedelta(days=nights)
    out_seat, out_fare = seat_for(choice.out, seat, cheapest, avoid_seats)
    legs = [leg_of(choice.out, out_seat, out_fare, travellers, origin, destination)]
    if choice.back is not None:
        back_seat, back_fare = seat_for(choice.back, seat, cheapest, avoid_seats)
        legs.append(leg_of(choice.back, back_seat, back_fare, travellers, destination, origin))
    stays = []
    if choice.hotel is not None and nights >= 1:
        rooms = max(1, math.ceil(travellers / 2))
        rate = round(choice.hotel.price * rooms, 2)
        stays.append(HotelStay(hotel_id=choice.hotel.hotel_id, name=choice.hotel.name, city=destination,
                               checkin_date=start.isoformat(), checkout_date=end.isoformat(), nights=nights,
                               price_per_night=rate, total=round(rate * nights, 2), breakfast=choice.hotel.breakfast,
                               rooms=rooms))
    # free windows: from arrival (and check-in) to the ride home, never while on the way (a night
    # train arriving on day two leaves day one without sights)
    arrive = _at(choice.out.arrive)
    leave = _at(choice.back.depart) if choice.back else datetime.combine(end, datetime.min.time()).replace(hour=20)
    windows = []
    for i in range(nights + 1):
        day = start + timedelta(days=i)
        begin = max(datetime.combine(day, datetime.min.time()).replace(hour=9),
                    arrive + timedelta(minutes=60 if nights == 0 else 90))
        if i == 0 and busy_until is not None:
            begin = max(begin, datetime.fromisoformat(f"{day.isoformat()} {busy_until}"))
        finish = min(datetime.combine(day, datetime.min.time()).replace(hour=19), leave - timedelta(minutes=150))
        if begin.date() == day and finish > begin:
            windows.append((day, begin, finish))
    visits = schedule(sights, windows, destination, cheapest)
    title = (f"{origin} → {destination} {length_words(nights, lang)}" if lang == "zh"
             else f"{origin} → {destination}, {length_words(nights, lang)}")
    plan = TripPlan(title=title, origin_city=origin, destination_city=destination, start_date=start.isoformat(),
                    end_date=end.isoformat(), travellers=travellers, legs=legs, stays=stays, visits=visits,
                    alternatives=alternatives, notes=[*notes, *source_notes(sources, lang)],
                    data_source=data_source(sources))
    plan.total_cost = plan.computed_total()
    return plan


def data_source(sources: frozenset[str]) -> Literal["sandbox", "live", "mixed"]:
    """What the plan was built on, from the "source" of every tool answer it used."""
    if not sources or sources == {"sandbox"}:
        return "sandbox"
    return "mixed" if "sandbox" in sources else "live"


def source_notes(sources: frozenset[str], lang: str) -> list[str]:
    if "sandbox" in sources or not sources:
        return [say("sandbox_note" if sources <= {"sandbox"} else "mixed_note", lang)]
    return [say("live_note", lang)]
