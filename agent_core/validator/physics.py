"""The physics of every leg: a leg of a given mode cannot cover its distance faster than that mode
moves, and a ride should not crawl. Rides with a timetable are also checked against it
(fact_checks); this check is what holds a taxi, drive, walk or transit leg, which no timetable
covers, to its distance.

Distance: the straight line between the two ends on the map (stations, airports and sights
exactly, a city by its centre with a 60 km margin), or route_plan's distance inside a city when
the map does not know a place. The straight line is never longer than the way, so a speed above
the bound over it is impossible over the real way too.

Speed bounds (km/h) — above the upper bound is impossible, below the lower one (only for legs of
3 hours or more) is not a real ride:

    mode      upper  lower   why
    walk        7     —      a brisk walk
    transit   250     5      metro and bus; 250 lets the Shanghai maglev through
    taxi      120     8      China's expressway limit
    drive     120     —      the same limit; a road trip may dawdle
    train     350     20     the fastest line in service; slow trains still average 40+
    flight   1000    100     a jet's ground speed with a tail wind

A flight's times are local: they are compared in the airports' time zones.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from agent_core.validator import wording_run as W
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import leg_name, moment, same_place
from agent_core.validator.places import Spot
from agent_core.validator.wording import Text, kind
from tools.plan import Leg, TripPlan


@dataclass(frozen=True, slots=True)
class Bounds:
    upper: float  # km/h
    lower: float | None = None  # km/h, for legs of LOWER_FROM_MIN minutes or more


SPEED = {
    "walk": Bounds(7),
    "transit": Bounds(250, 5),
    "taxi": Bounds(120, 8),
    "drive": Bounds(120),
    "train": Bounds(350, 20),
    "flight": Bounds(1000, 100),
}
LOWER_FROM_MIN = 180


async def check_physics(plan: TripPlan, facts: FactSource, report: CheckReport) -> None:
    measured = await asyncio.gather(*[_measure(leg, facts) for leg in plan.legs])
    for i, (leg, m) in enumerate(zip(plan.legs, measured, strict=True)):
        if m is None:
            continue
        item = leg_name(i, leg)
        minutes, km, slack, how = m
        evidence = W.DISTANCE(origin=leg.origin, destination=leg.destination, km=km, how=how, depart=leg.depart, arrive=leg.arrive)
        if minutes < 0 or (minutes == 0 and km > slack):
            report.add(Category.LOGIC, item, W.NOT_AFTER(), evidence)
            continue
        if minutes == 0:
            continue
        bounds = SPEED.get(leg.kind)
        if bounds is None:
            continue
        hours = minutes / 60
        if km - slack > bounds.upper * hours:
            report.add(Category.LOGIC, item, W.TOO_FAST(kind=kind(leg.kind), km=km, minutes=minutes, speed=km / hours,
                                                       limit=int(bounds.upper)), evidence)
        elif bounds.lower is not None and minutes >= LOWER_FROM_MIN and (km + slack) / hours < bounds.lower:
            report.add(Category.LOGIC, item, W.TOO_SLOW(kind=kind(leg.kind), km=km, minutes=minutes, speed=km / hours,
                                                       limit=int(bounds.lower)), evidence)


async def _measure(leg: Leg, facts: FactSource) -> tuple[int, float, float, Text] | None:
    """(minutes, km, margin km, how the distance was found), or None when it cannot be told."""
    dep, arr = moment(leg.depart), moment(leg.arrive)
    if dep is None or arr is None or same_place(leg.origin, leg.destination):
        return None
    a = facts.spot(leg.origin, leg.origin_city) or facts.spot(leg.origin_city or "")
    b = facts.spot(leg.destination, leg.destination_city) or facts.spot(leg.destination_city or "")
    minutes = _minutes(dep, arr, a, b, leg.kind == "flight")
    if minutes is None:
        return None
    if a is not None and b is not None:
        return minutes, a.km_to(b), a.slack_km + b.slack_km, W.BY_MAP()
    if leg.kind in ("train", "flight"):
        return None
    city = facts.city_id(leg.origin_city or leg.destination_city or "") or (a.city_id if a else b.city_id if b else None)
    if city is None:
        return None
    km = await facts.route_km(city, leg.origin, leg.destination)
    return (minutes, km, 0.0, W.BY_ROUTE()) if km is not None else None


def _minutes(dep: datetime, arr: datetime, a: Spot | None, b: Spot | None, zoned: bool) -> int | None:
    """Minutes from departure to arrival; a flight's local times in its airports' zones."""
    if zoned:
        if a is None or b is None:
            return None
        start, end = dep.replace(tzinfo=ZoneInfo(a.tz)), arr.replace(tzinfo=ZoneInfo(b.tz))
        return round((end - start).total_seconds() / 60)
    return round((arr - dep).total_seconds() / 60)
