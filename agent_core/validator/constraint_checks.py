"""Whether a plan keeps the person's hard limits (constraints) and gives what they asked (needs),
and whether it is whole (an outbound and, unless one-way, a return leg; beds for every night)."""

from __future__ import annotations

import math
from datetime import date

from agent_core.validator.constraints import Constraints
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import day, leg_name, money, place_key, stay_name, visit_name
from tools.plan import TripPlan

_SEAT_CLASSES = ("商务座", "一等座", "二等座", "硬卧", "软卧", "硬座", "软座")


def check_constraints(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    req = c.request
    if req.budget is not None and plan.total_cost > req.budget + 0.5:
        report.add(Category.CONSTRAINT, "total_cost", f"the total {money(plan.total_cost)} is over the budget",
                   f"the person's budget: {money(req.budget)}")
    for i, leg in enumerate(plan.legs):
        if leg.kind in c.forbidden_transport:
            report.add(Category.CONSTRAINT, leg_name(i, leg), f"the person does not want to go by {leg.kind}",
                       f"request: no {leg.kind}")
        if leg.kind == "flight" and leg.airline:
            for spellings in c.avoid_airlines:
                if any(s and (s in leg.airline or leg.airline in s) for s in spellings):
                    report.add(Category.CONSTRAINT, leg_name(i, leg), f"the person asked to avoid {spellings[0]}",
                               f"the flight is operated by {leg.airline}")
        if leg.kind == "train" and req.seat in _SEAT_CLASSES and leg.seat and leg.seat != req.seat:
            report.add(Category.CONSTRAINT, leg_name(i, leg), f"seat {leg.seat} is not the {req.seat} the person asked for",
                       f"request: {req.seat}")
        if leg.kind == "flight" and c.cabin and leg.seat and c.cabin[:2] not in leg.seat:
            report.add(Category.CONSTRAINT, leg_name(i, leg), f"cabin {leg.seat} is not the {c.cabin} the person asked for",
                       f"request: {c.cabin}")
    for place in c.avoid_places:
        key = place_key(place)
        for k, visit in enumerate(plan.visits):
            if key and key in place_key(visit.name):
                report.add(Category.CONSTRAINT, visit_name(k, visit), f"the person asked to avoid {place}", f"request: avoid {place}")
    _check_dates(plan, c, report)


def _check_dates(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    if c.fixed_start is not None:
        first = day(plan.legs[0].depart) if plan.legs else day(plan.start_date)
        if day(plan.start_date) != c.fixed_start or (first is not None and first != c.fixed_start):
            what = leg_name(0, plan.legs[0]) if plan.legs else "start_date"
            report.add(Category.CONSTRAINT, what, f"the trip does not start on {c.fixed_start}",
                       f"request: start {c.fixed_start}; plan starts {plan.start_date}, first leg {first}")
    end = c.fixed_end
    if end is None and c.fixed_start is not None and (n := c.request.trip_nights) is not None and c.request.end is None:
        end = date.fromordinal(c.fixed_start.toordinal() + n)
    if end is not None and not c.request.one_way:
        last = plan.legs[-1] if len(plan.legs) > 1 else None
        last_day = day(last.depart) if last else None
        if day(plan.end_date) != end or (last_day is not None and last_day != end):
            what = leg_name(len(plan.legs) - 1, last) if last else "end_date"
            report.add(Category.CONSTRAINT, what, f"the trip does not end on {end}",
                       f"request: back on {end}; plan ends {plan.end_date}, last leg {last_day}")


def check_needs(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    req = c.request
    start, end = day(plan.start_date), day(plan.end_date)
    nights = req.trip_nights
    if nights is not None and start and end and (end - start).days != nights and c.fixed_end is None:
        report.add(Category.NEED, "start_date..end_date", f"the trip has {(end - start).days} nights, the person asked for {nights}",
                   f"request: {req.days or nights + 1} days / {nights} nights")
    if req.travellers is not None and plan.travellers != req.travellers:
        report.add(Category.NEED, "travellers", f"the plan is for {plan.travellers}, the person travels with {req.travellers}",
                   f"request: {req.travellers} travellers")
    if req.breakfast:
        for j, stay in enumerate(plan.stays):
            if stay.breakfast is False:
                report.add(Category.NEED, stay_name(j, stay), "no breakfast, which the person asked for", "request: breakfast")


def check_complete(plan: TripPlan, c: Constraints, facts: FactSource, report: CheckReport) -> None:
    home = facts.city_id(plan.origin_city)
    away = facts.city_id(plan.destination_city)
    if home is not None and home == away:
        return
    rides = [leg for leg in plan.legs if leg.kind in ("train", "flight")]
    if not rides:
        report.add(Category.INCOMPLETE, "legs", f"there is no way to get from {plan.origin_city} to {plan.destination_city}",
                   "the plan has no train or flight")
        return
    last = rides[-1]
    back_to = facts.city_id(last.destination_city or "") or facts.city_id(last.destination)
    if not c.request.one_way and home is not None and back_to != home:
        report.add(Category.INCOMPLETE, "legs", f"there is no return leg to {plan.origin_city}",
                   f"the last leg {last.number} ends at {last.destination}")
    start, end = day(plan.start_date), day(plan.end_date)
    if start and end and (end - start).days >= 1:
        covered = sum(s.nights for s in plan.stays)
        if covered < (end - start).days:
            report.add(Category.INCOMPLETE, "stays", f"only {covered} of {(end - start).days} nights have a bed",
                       f"stays: {', '.join(s.name for s in plan.stays) or 'none'}")


def rooms_for(travellers: int) -> int:
    return max(1, math.ceil(travellers / 2))
