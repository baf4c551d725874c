"""Whether the trip can be lived in the order it is written: legs, connections, visits, nights, sums.

Thresholds: a change of train at the same station needs 20 minutes; a flight needs the person
at the airport 90 minutes before departure, after the city transfer route_plan reports from
wherever they were before (the arriving leg's station or airport, or the last sight).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta

from agent_core.validator import wording_plan as W
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import (
    day,
    leg_name,
    moment,
    same_place,
    stay_name,
    visit_name,
    visit_span,
)
from agent_core.validator.wording import Text, kind, raw
from tools.plan import Leg, TripPlan

TRAIN_CHANGE_MIN = 20
AIRPORT_BEFORE_MIN = 90
TOTAL_TOLERANCE = 1.0


@dataclass(frozen=True, slots=True)
class _Before:
    """Where the person is, and from when, before a departure."""

    place: str
    free_at: datetime
    what: Text
    city: str | None


def _city_of_leg_end(leg: Leg, facts: FactSource, end: str) -> str | None:
    stated = leg.destination_city if end == "destination" else leg.origin_city
    place = leg.destination if end == "destination" else leg.origin
    return facts.city_id(stated or "") or facts.city_id(place)


async def check_timeline(plan: TripPlan, facts: FactSource, report: CheckReport, *, totals: bool = True) -> None:
    """`totals` False: a traveller's view of a team plan, whose total is the party's (checked once)."""
    _check_legs_order(plan, report)
    await _check_connections(plan, facts, report)
    _check_visits(plan, report)
    _check_stays(plan, report)
    if totals:
        check_totals(plan, report)


def _check_legs_order(plan: TripPlan, report: CheckReport) -> None:
    start, end = day(plan.start_date), day(plan.end_date)
    for i, leg in enumerate(plan.legs):
        dep, arr = moment(leg.depart), moment(leg.arrive)
        if dep is None or arr is None:
            report.add(Category.LOGIC, leg_name(i, leg), W.UNREADABLE_TIMES(), W.LEG_TIMES(depart=repr(leg.depart), arrive=repr(leg.arrive)))
            continue
        if start and end and not start <= dep.date() <= end:
            report.add(Category.LOGIC, leg_name(i, leg), W.OUTSIDE_TRIP(start=plan.start_date, end=plan.end_date), W.DEPARTS(depart=leg.depart))
        if i == 0:
            continue
        prev = plan.legs[i - 1]
        prev_arr = moment(prev.arrive)
        if prev_arr is not None and dep < prev_arr:
            report.add(Category.LOGIC, leg_name(i, leg), W.BEFORE_PREVIOUS(arrive=prev.arrive),
                       W.ARRIVES(leg=leg_name(i - 1, prev), arrive=prev.arrive))


async def _check_connections(plan: TripPlan, facts: FactSource, report: CheckReport) -> None:
    """For every train or flight, the minutes from where the person was to its departure."""
    checks = []
    for i, leg in enumerate(plan.legs):
        dep = moment(leg.depart)
        if leg.kind not in ("train", "flight") or dep is None:
            continue
        before = _where_before(plan, i, dep, facts)
        if before is not None:
            checks.append((i, leg, dep, before))
    city_of = {i: _city_of_leg_end(leg, facts, "origin") for i, leg, _, _ in checks}
    routes = await asyncio.gather(*[
        _transfer(facts, city_of[i], b.place, leg.origin) for i, leg, _, b in checks
    ])
    for (i, leg, dep, before), route in zip(checks, routes, strict=True):
        need = AIRPORT_BEFORE_MIN if leg.kind == "flight" else TRAIN_CHANGE_MIN
        if route is None:
            continue  # route_plan does not know the way: nothing to hold against the plan
        slack = (dep - before.free_at).total_seconds() / 60 - route
        if slack < need:
            where = W.AT_AIRPORT() if leg.kind == "flight" else W.AT_STATION()
            report.add(
                Category.LOGIC, leg_name(i, leg), W.TOO_SHORT(slack=slack, where=where, what=before.what, need=need),
                W.TRANSFER(origin=before.place, destination=leg.origin, minutes=route, free_at=f"{before.free_at:%Y-%m-%d %H:%M}"),
            )


async def _transfer(facts: FactSource, city: str | None, origin: str, destination: str) -> int | None:
    if same_place(origin, destination):
        return 0
    if city is None:
        return None
    return await facts.transfer_minutes(city, origin, destination)


def _where_before(plan: TripPlan, i: int, dep: datetime, facts: FactSource) -> _Before | None:
    """The latest of: the previous leg's arrival, a sight visited earlier that day."""
    best: _Before | None = None
    if i > 0:
        prev = plan.legs[i - 1]
        arr = moment(prev.arrive)
        if arr is not None and arr <= dep and (dep - arr) < timedelta(hours=12):
            best = _Before(prev.destination, arr, W.AFTER_RIDE(ride=prev.number or kind(prev.kind)), None)
    for k, visit in enumerate(plan.visits):
        span = visit_span(visit)
        if span is None or span[1] > dep or span[1].date() != dep.date():
            continue
        if best is None or span[1] > best.free_at:
            best = _Before(visit.name, span[1], W.AFTER_VISIT(visit=visit_name(k, visit)), None)
    return best


def _check_visits(plan: TripPlan, report: CheckReport) -> None:
    spans = []
    for k, visit in enumerate(plan.visits):
        span = visit_span(visit)
        if span is not None:
            spans.append((k, visit, span))
    for a in range(len(spans)):
        for b in range(a + 1, len(spans)):
            (ka, va, (s1, e1)), (kb, vb, (s2, e2)) = spans[a], spans[b]
            if s1 < e2 and s2 < e1:
                report.add(Category.LOGIC, visit_name(kb, vb), W.OVERLAPS(other=visit_name(ka, va)),
                           raw(f"{va.name} {s1:%H:%M}-{e1:%H:%M}, {vb.name} {s2:%H:%M}-{e2:%H:%M}"))
    for k, visit, (s, e) in spans:
        for i, leg in enumerate(plan.legs):
            dep, arr = moment(leg.depart), moment(leg.arrive)
            if dep is not None and arr is not None and s < arr and dep < e:
                report.add(Category.LOGIC, visit_name(k, visit), W.ON_A_RIDE(ride=leg.number or kind(leg.kind)),
                           W.ARRIVES(leg=leg_name(i, leg), arrive=leg.arrive))
    if plan.legs and spans:
        first_arr = moment(plan.legs[0].arrive)
        for k, visit, (s, _e) in spans:
            if first_arr is not None and s < first_arr and s.date() == first_arr.date():
                report.add(Category.LOGIC, visit_name(k, visit), W.BEFORE_ARRIVAL(),
                           W.ARRIVES(leg=leg_name(0, plan.legs[0]), arrive=plan.legs[0].arrive))


def _check_stays(plan: TripPlan, report: CheckReport) -> None:
    for j, stay in enumerate(plan.stays):
        cin, cout = day(stay.checkin_date), day(stay.checkout_date)
        if cin is None or cout is None:
            report.add(Category.LOGIC, stay_name(j, stay), W.UNREADABLE_DATES(), raw(f"{stay.checkin_date}..{stay.checkout_date}"))
            continue
        if (cout - cin).days != stay.nights:
            report.add(Category.LOGIC, stay_name(j, stay), W.NIGHTS_MISMATCH(nights=stay.nights, span=(cout - cin).days),
                       W.STAY_DATES(checkin=stay.checkin_date, checkout=stay.checkout_date))
        if abs(stay.total - stay.nights * stay.price_per_night) > TOTAL_TOLERANCE * max(1, stay.nights):
            report.add(Category.FACT, stay_name(j, stay), W.STAY_TOTAL(total=stay.total),
                       W.NIGHTS_TIMES_RATE(nights=stay.nights, rate=stay.price_per_night, sum=stay.nights * stay.price_per_night))


def check_totals(plan: TripPlan, report: CheckReport) -> None:
    expected = plan.computed_total()
    if abs(expected - plan.total_cost) > TOTAL_TOLERANCE:
        report.add(Category.FACT, "total_cost", W.TOTAL_MISMATCH(total=plan.total_cost),
                   W.PARTS_SUM(travellers=plan.travellers, sum=expected))
