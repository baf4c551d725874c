"""Re-query every train, flight, hotel and sight of a plan and compare it with what the tools hold."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable

from agent_core.validator.facts import FactSource, HotelFact, PoiFact, RideFact, RideMissing
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import (
    day,
    leg_name,
    money,
    same_name,
    same_place,
    stay_name,
    visit_name,
    visit_span,
)
from tools.plan import HotelStay, Leg, TripPlan, Visit

PRICE_TOLERANCE = 1.0  # CNY per unit: rounding of fares and rates
_HOURS = re.compile(r"(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})")
_CLOSED = re.compile(r"周([一二三四五六日])(?:闭馆|闭园|闭|休)")
_WEEKDAYS = "一二三四五六日"


async def check_facts(plan: TripPlan, facts: FactSource, report: CheckReport) -> None:
    """Every lookup runs concurrently (a live provider answers over the network); findings are
    added in plan order so reports read the same every time."""
    rides: list[Awaitable[RideFact | RideMissing | None]] = [_ride(leg, facts) for leg in plan.legs]
    hotels = [facts.hotel(s) for s in plan.stays]
    pois = [facts.poi(v) for v in plan.visits]
    results = await asyncio.gather(*rides, *hotels, *pois)
    report.lookups += sum(1 for leg in plan.legs if leg.kind in ("train", "flight")) + len(hotels) + len(pois)
    n, m = len(plan.legs), len(plan.stays)
    for i, leg in enumerate(plan.legs):
        ride = results[i]
        if ride is not None:
            _compare_ride(i, leg, ride, plan.travellers, facts, report)  # type: ignore[arg-type]
    for j, stay in enumerate(plan.stays):
        _compare_hotel(j, stay, results[n + j], plan.travellers, facts, report)  # type: ignore[arg-type]
    for k, visit in enumerate(plan.visits):
        _compare_poi(k, visit, results[n + m + k], facts, report)  # type: ignore[arg-type]


async def _ride(leg: Leg, facts: FactSource) -> RideFact | RideMissing | None:
    if leg.kind not in ("train", "flight"):
        return None
    if not leg.number:
        return RideMissing(f"the {leg.kind} has no number, so no tool can confirm it")
    return await facts.ride(leg.kind, leg.number, leg.depart[:10], leg.origin, leg.destination, leg.depart)


def _compare_ride(i: int, leg: Leg, ride: RideFact | RideMissing, travellers: int, facts: FactSource, report: CheckReport) -> None:
    item = leg_name(i, leg)
    tool = f"{leg.kind}_search"
    if isinstance(ride, RideMissing):
        report.add(Category.FACT, item, f"{leg.number} cannot be found as stated", f"{tool}: {ride.reason}")
        return
    said = f"{tool} {ride.number}: {ride.origin} {ride.depart} → {ride.destination} {ride.arrive}"
    if not same_place(leg.origin, ride.origin) or not same_place(leg.destination, ride.destination):
        report.add(Category.FACT, item, f"the plan rides {leg.origin}→{leg.destination}, the {leg.kind} calls at {ride.origin}→{ride.destination}", said)
    if leg.depart != ride.depart:
        report.add(Category.FACT, item, f"departure {leg.depart} does not match {ride.depart}", said)
    if leg.arrive != ride.arrive:
        report.add(Category.FACT, item, f"arrival {leg.arrive} does not match {ride.arrive}", said)
    for side, stated, actual in (("origin", leg.origin_city, ride.origin_city), ("destination", leg.destination_city, ride.destination_city)):
        if stated and facts.city_id(stated) not in (None, actual):
            report.add(Category.FACT, item, f"{side} city {stated} is not where {ride.origin if side == 'origin' else ride.destination} is", said)
    if leg.kind == "flight" and leg.airline and ride.airline and not same_name(leg.airline, ride.airline):
        report.add(Category.FACT, item, f"airline {leg.airline} does not match {ride.airline}", said)
    fares = dict(ride.fares)
    offer = ", ".join(f"{k} {v:g}" for k, v in fares.items()) or "no fares"
    if leg.seat and fares and leg.seat not in fares and not (leg.kind == "flight" and len(fares) == 1):
        report.add(Category.FACT, item, f"seat class {leg.seat} is not offered", f"{tool} fares: {offer}")
        return
    candidates = [fares[leg.seat]] if leg.seat in fares else list(fares.values())
    if candidates and not any(abs(leg.price - f * travellers) <= PRICE_TOLERANCE * travellers for f in candidates):
        report.add(Category.FACT, item, f"price {money(leg.price)} for {travellers} is not the fare x travellers", f"{tool} fares per person: {offer}")


def _compare_hotel(j: int, stay: HotelStay, hotel: HotelFact | None, travellers: int, facts: FactSource, report: CheckReport) -> None:
    item = stay_name(j, stay)
    if hotel is None:
        report.add(Category.FACT, item, "no hotel with this id exists for these dates", f"hotel_search: nothing found for {stay.hotel_id}")
        return
    said = f"hotel_search {hotel.hotel_id}: {hotel.name}, city {hotel.city}, {money(hotel.price_per_night)}/night"
    if facts.city_id(stay.city) != hotel.city:
        report.add(Category.FACT, item, f"the hotel is not in {stay.city}", said)
    if not any(same_name(stay.name, n) for n in (hotel.name, *hotel.other_names)):
        report.add(Category.FACT, item, f"the name {stay.name} does not match {hotel.name}", said)
    rooms = range(1, max(1, travellers) + 1)  # a party may share rooms or not
    if not any(abs(stay.price_per_night - hotel.price_per_night * r) <= PRICE_TOLERANCE * r for r in rooms):
        report.add(Category.FACT, item, f"rate {money(stay.price_per_night)}/night does not match", said)
    if stay.breakfast and hotel.breakfast is False:
        report.add(Category.FACT, item, "breakfast is promised but the hotel has none", said)


def _compare_poi(k: int, visit: Visit, poi: PoiFact | None, facts: FactSource, report: CheckReport) -> None:
    item = visit_name(k, visit)
    if poi is None:
        report.add(Category.FACT, item, "no place with this id exists", f"poi_search: nothing found for {visit.poi_id}")
        return
    said = f"poi_search {poi.poi_id}: {poi.name}, city {poi.city}, ticket {money(poi.price)}, hours {poi.hours or '?'}"
    if facts.city_id(visit.city) != poi.city:
        report.add(Category.FACT, item, f"the place is not in {visit.city}", said)
    if not any(same_name(visit.name, n) for n in (poi.name, *poi.other_names)):
        report.add(Category.FACT, item, f"the name {visit.name} does not match {poi.name}", said)
    if abs(visit.ticket_price - poi.price) > PRICE_TOLERANCE:
        report.add(Category.FACT, item, f"ticket {money(visit.ticket_price)} does not match", said)
    closed = closed_reason(poi.hours, visit)
    if closed:
        report.add(Category.LOGIC, item, closed, said)


def closed_reason(hours: str, visit: Visit) -> str | None:
    """Why the place is closed at the planned time, or None. Hours like "08:30-17:00 周一闭馆"."""
    span = visit_span(visit)
    when = day(visit.date)
    if when is not None and (m := _CLOSED.search(hours)) and _WEEKDAYS.index(m.group(1)) == when.weekday():
        return f"it is closed on {when:%A}s"
    h = _HOURS.search(hours)
    if span is None or h is None:
        return None
    start, _end = span
    opens = start.replace(hour=int(h.group(1)), minute=int(h.group(2)))
    closes = start.replace(hour=min(int(h.group(3)), 23), minute=int(h.group(4)) if int(h.group(3)) < 24 else 59)
    if start < opens or start >= closes:
        return f"the visit starts at {start:%H:%M}, outside the opening hours {h.group(0)}"
    return None
