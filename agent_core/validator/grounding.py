"""Grounding: every train, flight, hotel and sight of a plan must be one that a tool returned in
this run (the seed's promise: "every item comes from a tool result"), with the number, times,
stations, price and name the tool gave. Checked before the provider is asked again, and with
the same problem texts, so a fault seen by both is reported once, with the run's evidence.
"""

from __future__ import annotations

from agent_core.validator import wording_facts as F
from agent_core.validator import wording_run as W
from agent_core.validator.evidence import RunEvidence, SeenRide
from agent_core.validator.fact_checks import PRICE_TOLERANCE, fare_problem
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import leg_name, same_name, same_place, stay_name, visit_name
from agent_core.validator.wording import Text, Value, kind
from tools.plan import HotelStay, Leg, TripPlan, Visit

MAX_LISTED = 12  # numbers or names shown as evidence of what the run did return


def check_grounding(plan: TripPlan, evidence: RunEvidence, report: CheckReport) -> None:
    for i, leg in enumerate(plan.legs):
        if leg.kind in ("train", "flight") and leg.number:
            _ride(i, leg, plan.travellers, evidence, report)
    for j, stay in enumerate(plan.stays):
        _hotel(j, stay, plan.travellers, evidence, report)
    for k, visit in enumerate(plan.visits):
        _poi(k, visit, evidence, report)


def returned(evidence: RunEvidence, kind_name: str) -> Text:
    """The evidence for an item no tool returned: what the tool did return, or that it never ran."""
    tool = f"{kind_name}_search"
    numbers = evidence.numbers(kind_name)
    if not numbers:
        return W.RUN_NOTHING(tool=tool)
    return W.RUN_RETURNED(tool=tool, seen=", ".join(numbers[:MAX_LISTED]) + (" …" if len(numbers) > MAX_LISTED else ""))


def ride_said(r: SeenRide) -> Text:
    return W.RUN_RIDE(tool=r.tool, number=r.number, origin=r.origin, depart=r.depart, destination=r.destination, arrive=r.arrive)


def rides_on(evidence: RunEvidence, number: str, day: str) -> tuple[list[SeenRide], list[SeenRide]]:
    """(every ride of that number the run saw, those leaving on `day`)."""
    seen = evidence.rides_of(number)
    return seen, [r for r in seen if r.depart[:10] == day]


def _ride(i: int, leg: Leg, travellers: int, evidence: RunEvidence, report: CheckReport) -> None:
    item = leg_name(i, leg)
    number = leg.number or ""
    seen, on_day = rides_on(evidence, number, leg.depart[:10])
    if not seen:
        what = W.WHAT_TRAIN() if leg.kind == "train" else W.WHAT_FLIGHT()
        report.add(Category.FACT, item, W.NOT_IN_RUN(what=what), returned(evidence, leg.kind))
        return
    if not on_day:
        days = ", ".join(sorted({r.depart[:10] for r in seen}))
        report.add(Category.FACT, item, W.RUN_OTHER_DAY(number=number, days=days, day=leg.depart[:10]), ride_said(seen[0]))
        return
    # the record the leg was built from: a search may have run twice (a newer answer wins ties)
    ride = max(reversed(on_day), key=lambda r: (same_place(leg.origin, r.origin) and same_place(leg.destination, r.destination),
                                                 r.depart == leg.depart, r.arrive == leg.arrive, _fares_fit(leg, r, travellers)))
    if not (same_place(leg.origin, ride.origin) and same_place(leg.destination, ride.destination)):
        report.add(Category.FACT, item, F.WRONG_STOPS(origin=leg.origin, destination=leg.destination, kind=kind(leg.kind),
                                                     real_origin=ride.origin, real_destination=ride.destination), ride_said(ride))
    said = ride_said(ride)
    if leg.depart != ride.depart:
        report.add(Category.FACT, item, F.WRONG_DEPART(stated=leg.depart, actual=ride.depart), said)
    if leg.arrive != ride.arrive:
        report.add(Category.FACT, item, F.WRONG_ARRIVE(stated=leg.arrive, actual=ride.arrive), said)
    if leg.kind == "flight" and leg.airline and ride.airline and not same_name(leg.airline, ride.airline):
        report.add(Category.FACT, item, F.WRONG_AIRLINE(stated=leg.airline, actual=ride.airline), said)
    fares = {seat: price for seat, price in ride.fares if seat}
    problem = fare_problem(leg, fares, travellers) if fares else None
    if problem is not None:
        offer: Value = tuple(F.FARE(seat=k, price=v) for k, v in fares.items())
        tool = f"{ride.tool}"
        evidence_text = F.FARES(tool=tool, offer=offer) if problem.key == F.NO_SUCH_SEAT.key else F.FARES_PER_PERSON(tool=tool, offer=offer)
        report.add(Category.FACT, item, problem, evidence_text)


def _fares_fit(leg: Leg, ride: SeenRide, travellers: int) -> bool:
    fares = {seat: price for seat, price in ride.fares if seat}
    return bool(fares) and fare_problem(leg, fares, travellers) is None


def _hotel(j: int, stay: HotelStay, travellers: int, evidence: RunEvidence, report: CheckReport) -> None:
    item = stay_name(j, stay)
    seen = evidence.hotels_of(stay.hotel_id)
    if not seen:
        names = [n for n, _ in evidence.hotel_names()]
        listed = ", ".join(dict.fromkeys(names[:MAX_LISTED]))
        report.add(Category.FACT, item, W.NOT_IN_RUN(what=W.WHAT_HOTEL()),
                   W.RUN_RETURNED(tool="hotel_search", seen=listed) if names else W.RUN_NOTHING(tool="hotel_search"))
        return
    hotel = seen[0]
    said = W.RUN_HOTEL(hotel_id=hotel.hotel_id, name=hotel.name, price=hotel.price)
    if not any(same_name(stay.name, h.name) for h in seen):
        report.add(Category.FACT, item, F.WRONG_NAME(stated=stay.name, actual=hotel.name), said)
    same_dates = [h for h in seen if h.checkin == stay.checkin_date and h.checkout == stay.checkout_date]
    rooms = range(1, max(1, travellers) + 1)
    if same_dates and not any(abs(stay.price_per_night - h.price * r) <= PRICE_TOLERANCE * r for h in same_dates for r in rooms):
        h = same_dates[0]
        report.add(Category.FACT, item, F.WRONG_RATE(price=stay.price_per_night),
                   W.RUN_HOTEL(hotel_id=h.hotel_id, name=h.name, price=h.price))
    if stay.breakfast and all(h.breakfast is False for h in seen):
        report.add(Category.FACT, item, F.NO_BREAKFAST(), said)


def _poi(k: int, visit: Visit, evidence: RunEvidence, report: CheckReport) -> None:
    item = visit_name(k, visit)
    poi = evidence.pois.get(visit.poi_id)
    if poi is None:
        names = [p.name for p in evidence.pois.values()]
        listed = ", ".join(names[:MAX_LISTED]) + (" …" if len(names) > MAX_LISTED else "")
        report.add(Category.FACT, item, W.NOT_IN_RUN(what=W.WHAT_SIGHT()),
                   W.RUN_RETURNED(tool="poi_search", seen=listed) if names else W.RUN_NOTHING(tool="poi_search"))
        return
    said = W.RUN_POI(tool=poi.tool, poi_id=poi.poi_id, name=poi.name, price=poi.price)
    if not any(n and same_name(visit.name, n) for n in (poi.name, poi.name_en)):
        report.add(Category.FACT, item, F.WRONG_NAME(stated=visit.name, actual=poi.name), said)
    if abs(visit.ticket_price - poi.price) > PRICE_TOLERANCE:
        report.add(Category.FACT, item, F.WRONG_TICKET(price=visit.ticket_price), said)
