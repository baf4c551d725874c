"""Re-query every train, flight, hotel and sight of a plan and compare it with what the tools hold."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping

from agent_core.validator import wording_facts as W
from agent_core.validator.facts import FactSource, HotelFact, PoiFact, RideFact, RideMissing
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.hours import closed_reason
from agent_core.validator.items import leg_name, same_name, same_place, stay_name, visit_name
from agent_core.validator.wording import Text, kind
from tools.plan import HotelStay, Leg, TripPlan, Visit

PRICE_TOLERANCE = 1.0  # CNY per unit: rounding of fares and rates
# A taxi or transit fare is an estimate (traffic, the route taken): a stated cost is wrong only
# when it is off by more than half the estimate and by more than 10 CNY.
LOCAL_SHARE, LOCAL_MARGIN = 0.5, 10.0
SEATS_IN_A_TAXI = 4


async def check_facts(plan: TripPlan, facts: FactSource, report: CheckReport) -> None:
    """Every lookup runs concurrently (a live provider answers over the network); findings are
    added in plan order so reports read the same every time."""
    rides: list[Awaitable[RideFact | RideMissing | None]] = [_ride(leg, facts) for leg in plan.legs]
    hotels = [facts.hotel(s) for s in plan.stays]
    pois = [facts.poi(v) for v in plan.visits]
    local = [_local_fare(leg, facts) for leg in plan.legs]
    results = await asyncio.gather(*rides, *hotels, *pois)
    fares = await asyncio.gather(*local)
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
    for i, (leg, fare) in enumerate(zip(plan.legs, fares, strict=True)):
        if fare is not None:
            _compare_local_fare(i, leg, fare, plan.travellers, report)


async def _local_fare(leg: Leg, facts: FactSource) -> float | None:
    """The estimate for a taxi or transit leg the plan prices, within one city."""
    if leg.kind not in ("taxi", "transit") or leg.price <= 0:
        return None
    city = facts.city_id(leg.origin_city or "")
    if city is None or facts.city_id(leg.destination_city or leg.origin_city or "") != city:
        return None
    return await facts.local_fare(city, leg.origin, leg.destination, leg.kind)


def _compare_local_fare(i: int, leg: Leg, fare: float, travellers: int, report: CheckReport) -> None:
    units = range(1, -(-travellers // SEATS_IN_A_TAXI) + 1) if leg.kind == "taxi" else [travellers]
    if any(abs(leg.price - fare * u) <= max(LOCAL_SHARE * fare * u, LOCAL_MARGIN) for u in units):
        return
    per = W.PER_CAR() if leg.kind == "taxi" else W.PER_PERSON()
    report.add(Category.FACT, leg_name(i, leg), W.WRONG_LOCAL_FARE(kind=kind(leg.kind), price=leg.price),
               W.LOCAL_FARE_SAID(origin=leg.origin, destination=leg.destination, kind=kind(leg.kind), fare=fare, per=per))


async def _ride(leg: Leg, facts: FactSource) -> RideFact | RideMissing | None:
    if leg.kind not in ("train", "flight"):
        return None
    if not leg.number:
        return RideMissing(W.NO_NUMBER(kind=kind(leg.kind)))
    return await facts.ride(leg.kind, leg.number, leg.depart[:10], leg.origin, leg.destination, leg.depart,
                            origin_city=leg.origin_city, destination_city=leg.destination_city)


def _compare_ride(i: int, leg: Leg, ride: RideFact | RideMissing, travellers: int, facts: FactSource, report: CheckReport) -> None:
    item = leg_name(i, leg)
    tool = f"{leg.kind}_search"
    if isinstance(ride, RideMissing):
        report.add(Category.FACT, item, W.RIDE_MISSING(number=leg.number or ""), W.RIDE_MISSING_EVIDENCE(tool=tool, reason=ride.reason))
        return
    said = W.RIDE_SAID(tool=tool, number=ride.number, origin=ride.origin, depart=ride.depart, destination=ride.destination, arrive=ride.arrive)
    if not same_place(leg.origin, ride.origin) or not same_place(leg.destination, ride.destination):
        report.add(Category.FACT, item, W.WRONG_STOPS(origin=leg.origin, destination=leg.destination, kind=kind(leg.kind),
                                                     real_origin=ride.origin, real_destination=ride.destination), said)
    if leg.depart != ride.depart:
        report.add(Category.FACT, item, W.WRONG_DEPART(stated=leg.depart, actual=ride.depart), said)
    if leg.arrive != ride.arrive:
        report.add(Category.FACT, item, W.WRONG_ARRIVE(stated=leg.arrive, actual=ride.arrive), said)
    for phrase, stated, actual, place in ((W.ORIGIN_CITY, leg.origin_city, ride.origin_city, ride.origin),
                                         (W.DESTINATION_CITY, leg.destination_city, ride.destination_city, ride.destination)):
        if stated and facts.city_id(stated) not in (None, actual):
            report.add(Category.FACT, item, phrase(city=stated, place=place), said)
    if leg.kind == "flight" and leg.airline and ride.airline and not same_name(leg.airline, ride.airline):
        report.add(Category.FACT, item, W.WRONG_AIRLINE(stated=leg.airline, actual=ride.airline), said)
    fares = dict(ride.fares)
    problem = fare_problem(leg, fares, travellers)
    if problem is not None:
        offer = tuple(W.FARE(seat=k, price=v) for k, v in fares.items())
        evidence = W.FARES(tool=tool, offer=offer) if problem.key == W.NO_SUCH_SEAT.key else W.FARES_PER_PERSON(tool=tool, offer=offer)
        report.add(Category.FACT, item, problem, evidence)


def fare_problem(leg: Leg, fares: Mapping[str, float], travellers: int) -> Text | None:
    """What is wrong with the leg's seat or price against the fares per person of its ride."""
    if leg.seat and fares and leg.seat not in fares and not (leg.kind == "flight" and len(fares) == 1):
        return W.NO_SUCH_SEAT(seat=leg.seat)
    candidates = [fares[leg.seat]] if leg.seat and leg.seat in fares else list(fares.values())
    if candidates and not any(abs(leg.price - f * travellers) <= PRICE_TOLERANCE * travellers for f in candidates):
        return W.WRONG_FARE(price=leg.price, travellers=travellers)
    return None


def _compare_hotel(j: int, stay: HotelStay, hotel: HotelFact | None, travellers: int, facts: FactSource, report: CheckReport) -> None:
    item = stay_name(j, stay)
    if hotel is None:
        report.add(Category.FACT, item, W.NO_HOTEL(), W.NO_HOTEL_EVIDENCE(hotel_id=stay.hotel_id))
        return
    said = W.HOTEL_SAID(hotel_id=hotel.hotel_id, name=hotel.name, city=hotel.city, price=hotel.price_per_night)
    if facts.city_id(stay.city) != hotel.city:
        report.add(Category.FACT, item, W.HOTEL_CITY(city=stay.city), said)
    if not any(same_name(stay.name, n) for n in (hotel.name, *hotel.other_names)):
        report.add(Category.FACT, item, W.WRONG_NAME(stated=stay.name, actual=hotel.name), said)
    rooms = range(1, max(1, travellers) + 1)  # a party may share rooms or not
    if not any(abs(stay.price_per_night - hotel.price_per_night * r) <= PRICE_TOLERANCE * r for r in rooms):
        report.add(Category.FACT, item, W.WRONG_RATE(price=stay.price_per_night), said)
    if stay.breakfast and hotel.breakfast is False:
        report.add(Category.FACT, item, W.NO_BREAKFAST(), said)


def _compare_poi(k: int, visit: Visit, poi: PoiFact | None, facts: FactSource, report: CheckReport) -> None:
    item = visit_name(k, visit)
    if poi is None:
        report.add(Category.FACT, item, W.NO_POI(), W.NO_POI_EVIDENCE(poi_id=visit.poi_id))
        return
    said = W.POI_SAID(poi_id=poi.poi_id, name=poi.name, city=poi.city, price=poi.price, hours=poi.hours or W.UNKNOWN_HOURS())
    if facts.city_id(visit.city) != poi.city:
        report.add(Category.FACT, item, W.POI_CITY(city=visit.city), said)
    if not any(same_name(visit.name, n) for n in (poi.name, *poi.other_names)):
        report.add(Category.FACT, item, W.WRONG_NAME(stated=visit.name, actual=poi.name), said)
    if abs(visit.ticket_price - poi.price) > PRICE_TOLERANCE:
        report.add(Category.FACT, item, W.WRONG_TICKET(price=visit.ticket_price), said)
    closed = closed_reason(poi.hours, visit)
    if closed:
        report.add(Category.LOGIC, item, closed, said)

