"""Where the person is at each moment of the trip, and whether the plan keeps them there.

The legs, in order of departure, say it: in the first leg's origin city before it leaves, on the
way while a leg runs, in its destination city after it arrives. A sight must be in the city the
person is in when the visit starts, on a date inside the trip, and before the journey home (the
last ride back to the origin city) leaves; a night at a hotel must be in the city the person is
in that night, inside the trip. Visits that overlap a ride, or start before the first arrival,
are the timeline's findings and are not repeated here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta

from agent_core.validator import wording_run as W
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import day, leg_name, moment, stay_name, visit_name, visit_span
from agent_core.validator.wording import Text, kind
from tools.plan import TripPlan

NIGHT = time(23, 0)  # where a person sleeps: where they are at 11 pm


@dataclass(frozen=True, slots=True)
class _Move:
    index: int
    depart: datetime
    arrive: datetime
    origin_city: str | None
    destination_city: str | None
    origin_label: str
    destination_label: str
    said: Text


def _moves(plan: TripPlan, facts: FactSource) -> list[_Move]:
    out = []
    for i, leg in enumerate(plan.legs):
        dep, arr = moment(leg.depart), moment(leg.arrive)
        if dep is None or arr is None:
            continue
        a = facts.city_id(leg.origin_city or "") or facts.city_id(leg.origin)
        b = facts.city_id(leg.destination_city or "") or facts.city_id(leg.destination)
        said = W.WHEREABOUTS(leg=leg_name(i, leg), depart=leg.depart, arrive=leg.arrive, city=leg.destination_city or leg.destination)
        out.append(_Move(i, dep, max(arr, dep), a, b, leg.origin_city or leg.origin, leg.destination_city or leg.destination, said))
    out.sort(key=lambda m: m.depart)
    return out


def _where(moves: list[_Move], at: datetime) -> tuple[str | None, str, Text] | None:
    """(city id, its name, the leg that put the person there) at `at`; None while on the way."""
    if not moves:
        return None
    if at < moves[0].depart:
        first = moves[0]
        return first.origin_city, first.origin_label, first.said
    here = None
    for m in moves:
        if m.depart <= at < m.arrive:
            return None
        if m.arrive <= at:
            here = m
    if here is None:
        return None
    return here.destination_city, here.destination_label, here.said


def check_whereabouts(plan: TripPlan, facts: FactSource, report: CheckReport) -> None:
    start, end = day(plan.start_date), day(plan.end_date)
    moves = _moves(plan, facts)
    home = facts.city_id(plan.origin_city)
    homeward = next((m for m in reversed(moves) if m.index > 0 and home is not None and m.destination_city == home
                     and plan.legs[m.index].kind in ("train", "flight")), None)
    first_arrival = moves[0].arrive if moves else None
    for k, visit in enumerate(plan.visits):
        item = visit_name(k, visit)
        when = day(visit.date)
        if when is not None and start is not None and end is not None and not start <= when <= end:
            report.add(Category.LOGIC, item, W.VISIT_OUTSIDE_TRIP(day=visit.date, start=plan.start_date, end=plan.end_date),
                       W.TRIP_DATES(start=plan.start_date, end=plan.end_date))
            continue
        span = visit_span(visit)
        if span is None:
            continue
        s, e = span
        if homeward is not None and s >= homeward.depart:
            leg = plan.legs[homeward.index]
            report.add(Category.LOGIC, item, W.AFTER_HOME(ride=leg.number or kind(leg.kind)), homeward.said)
            continue
        if any(m.depart < e and s < m.arrive for m in moves):
            continue  # on a ride: the timeline says so
        if first_arrival is not None and s < first_arrival and s.date() == first_arrival.date():
            continue  # before the first arrival: the timeline says so
        where = _where(moves, s)
        city = facts.city_id(visit.city)
        if where is not None and where[0] is not None and city is not None and where[0] != city:
            report.add(Category.LOGIC, item, W.ELSEWHERE(city=where[1], where=visit.city), where[2])
    for j, stay in enumerate(plan.stays):
        item = stay_name(j, stay)
        cin, cout = day(stay.checkin_date), day(stay.checkout_date)
        if cin is None or cout is None:
            continue
        if start is not None and end is not None and (cin < start or cout > end):
            report.add(Category.LOGIC, item, W.STAY_OUTSIDE_TRIP(checkin=stay.checkin_date, checkout=stay.checkout_date,
                                                                start=plan.start_date, end=plan.end_date),
                       W.TRIP_DATES(start=plan.start_date, end=plan.end_date))
            continue
        city = facts.city_id(stay.city)
        night = cin
        while night < cout and city is not None:
            where = _where(moves, datetime.combine(night, NIGHT))
            if where is not None and where[0] is not None and where[0] != city:
                report.add(Category.LOGIC, item, W.NIGHT_ELSEWHERE(night=night.isoformat(), city=where[1], where=stay.city), where[2])
                break
            night += timedelta(days=1)
