"""Whether a plan keeps the person's hard limits (constraints) and gives what they asked (needs),
and whether it is whole (an outbound and, unless one-way, a return leg; beds for every night)."""

from __future__ import annotations

import math
from datetime import date

from agent_core.offline.request import BUDGET_STARS
from agent_core.validator import wording_plan as W
from agent_core.validator.constraints import Constraints
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import day, leg_name, place_key, stay_name, visit_name
from agent_core.validator.wording import kind
from tools.plan import Leg, TripPlan

_SEAT_CLASSES = ("商务座", "一等座", "二等座", "硬卧", "软卧", "硬座", "软座")


def check_budget(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    """The whole party's total against the budget (a team's, not one traveller's share)."""
    budget = c.request.budget
    if budget is not None and plan.total_cost > budget + 0.5:
        report.add(Category.CONSTRAINT, "total_cost", W.OVER_BUDGET(total=plan.total_cost), W.BUDGET(budget=budget))


def check_constraints(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    """The limits on each ride, sight and date (on a traveller's view, for a team plan)."""
    req = c.request
    for i, leg in enumerate(plan.legs):
        if leg.kind in c.forbidden_transport:
            report.add(Category.CONSTRAINT, leg_name(i, leg), W.FORBIDDEN_KIND(kind=kind(leg.kind)), W.NO_KIND(kind=kind(leg.kind)))
        if leg.kind == "flight" and leg.airline:
            for spellings in c.avoid_airlines:
                if any(s and (s in leg.airline or leg.airline in s) for s in spellings):
                    report.add(Category.CONSTRAINT, leg_name(i, leg), W.AVOID_AIRLINE(airline=spellings[0]),
                               W.OPERATED_BY(airline=leg.airline))
        if leg.kind == "train" and req.seat in _SEAT_CLASSES and leg.seat and leg.seat != req.seat:
            report.add(Category.CONSTRAINT, leg_name(i, leg), W.WRONG_SEAT(seat=leg.seat, wanted=req.seat), W.REQUESTED(what=req.seat))
        if leg.kind == "flight" and c.cabin and leg.seat and c.cabin[:2] not in leg.seat:
            report.add(Category.CONSTRAINT, leg_name(i, leg), W.WRONG_CABIN(seat=leg.seat, wanted=c.cabin), W.REQUESTED(what=c.cabin))
        _check_refused_rides(i, leg, c, report)
    for place in c.avoid_places:
        key = place_key(place)
        for k, visit in enumerate(plan.visits):
            if key and key in place_key(visit.name):
                report.add(Category.CONSTRAINT, visit_name(k, visit), W.AVOID_PLACE(place=place), W.AVOID_PLACE_EVIDENCE(place=place))
    _check_dates(plan, c, report)


def _check_refused_rides(i: int, leg: Leg, c: Constraints, report: CheckReport) -> None:
    """What the person said no to about a ride (overnight, a hard seat), and the arrival they need
    on the first leg ("a meeting at 2pm")."""
    req = c.request
    if req.overnight is False and leg.kind in ("train", "flight") and leg.arrive[:10] > leg.depart[:10]:
        report.add(Category.CONSTRAINT, leg_name(i, leg), W.OVERNIGHT(arrive=leg.arrive), W.NO_OVERNIGHT_ASKED())
    if leg.seat and leg.seat in req.avoid_seats:
        report.add(Category.CONSTRAINT, leg_name(i, leg), W.HARD_SEAT(seat=leg.seat), W.NO_HARD_SEAT_ASKED())
    if i == 0 and req.arrive_before and leg.arrive > f"{leg.depart[:10]} {req.arrive_before}":
        report.add(Category.CONSTRAINT, leg_name(i, leg), W.LATE_ARRIVAL(arrive=leg.arrive, by=req.arrive_before),
                   W.ARRIVE_BY_ASKED(by=req.arrive_before))


def _check_dates(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    if c.fixed_start is not None:
        first = day(plan.legs[0].depart) if plan.legs else day(plan.start_date)
        if day(plan.start_date) != c.fixed_start or (first is not None and first != c.fixed_start):
            what = leg_name(0, plan.legs[0]) if plan.legs else "start_date"
            report.add(Category.CONSTRAINT, what, W.WRONG_START(day=str(c.fixed_start)),
                       W.START_EVIDENCE(day=str(c.fixed_start), start=plan.start_date, first=str(first)))
    end = c.fixed_end
    if end is None and c.fixed_start is not None and (n := c.request.trip_nights) is not None and c.request.end is None:
        end = date.fromordinal(c.fixed_start.toordinal() + n)
    if end is not None and not c.request.one_way:
        last = plan.legs[-1] if len(plan.legs) > 1 else None
        last_day = day(last.depart) if last else None
        if day(plan.end_date) != end or (last_day is not None and last_day != end):
            what = leg_name(len(plan.legs) - 1, last) if last else "end_date"
            report.add(Category.CONSTRAINT, what, W.WRONG_END(day=str(end)),
                       W.END_EVIDENCE(day=str(end), end=plan.end_date, last=str(last_day)))


def check_needs(plan: TripPlan, c: Constraints, report: CheckReport) -> None:
    req = c.request
    start, end = day(plan.start_date), day(plan.end_date)
    nights = req.trip_nights
    if nights is not None and start and end and (end - start).days != nights and c.fixed_end is None:
        report.add(Category.NEED, "start_date..end_date", W.NIGHTS(nights=(end - start).days, wanted=nights),
                   W.NIGHTS_EVIDENCE(days=req.days or nights + 1, nights=nights))
    wanted = c.travellers
    if wanted is not None and plan.travellers != wanted:
        report.add(Category.NEED, "travellers", W.TRAVELLERS(planned=plan.travellers, wanted=wanted),
                   W.TRAVELLERS_EVIDENCE(wanted=wanted))
    if req.breakfast:
        for j, stay in enumerate(plan.stays):
            if stay.breakfast is False:
                report.add(Category.NEED, stay_name(j, stay), W.NO_BREAKFAST(), W.BREAKFAST())


def check_destination(plan: TripPlan, c: Constraints, facts: FactSource, report: CheckReport) -> None:
    """The trip goes where the person asked (after any change of destination)."""
    wanted = facts.city_id(c.destination) if c.destination else None
    planned = facts.city_id(plan.destination_city)
    if wanted is not None and planned is not None and wanted != planned:
        report.add(Category.NEED, "destination_city", W.WRONG_DESTINATION(planned=plan.destination_city, wanted=c.destination or ""),
                   W.DESTINATION_EVIDENCE(wanted=c.destination or ""))


async def check_hotel_class(plan: TripPlan, c: Constraints, facts: FactSource, report: CheckReport) -> None:
    """The hotel is of the class asked for: a budget hotel is one (no more than 2 stars), "4-star"
    at least that."""
    stars = c.request.stars
    if stars is None:
        return
    wanted = W.BUDGET_CLASS() if stars <= BUDGET_STARS else W.STARS_CLASS(stars=stars)
    for j, stay in enumerate(plan.stays):
        hotel = await facts.hotel(stay)
        if hotel is None or hotel.stars is None:
            continue  # no such hotel is the facts' finding
        if (stars <= BUDGET_STARS and hotel.stars > BUDGET_STARS) or (stars > BUDGET_STARS and hotel.stars < stars):
            report.add(Category.NEED, stay_name(j, stay), W.HOTEL_CLASS(stars=hotel.stars, wanted=wanted),
                       W.HOTEL_CLASS_EVIDENCE(wanted=wanted))


def check_complete(plan: TripPlan, c: Constraints, facts: FactSource, report: CheckReport) -> None:
    home = facts.city_id(plan.origin_city)
    away = facts.city_id(plan.destination_city)
    if home is not None and home == away:
        return
    rides = [leg for leg in plan.legs if leg.kind in ("train", "flight")]
    if not rides:
        report.add(Category.INCOMPLETE, "legs", W.NO_WAY(origin=plan.origin_city, destination=plan.destination_city), W.NO_RIDES())
        return
    last = rides[-1]
    back_to = facts.city_id(last.destination_city or "") or facts.city_id(last.destination)
    if not c.request.one_way and home is not None and back_to != home:
        report.add(Category.INCOMPLETE, "legs", W.NO_RETURN(origin=plan.origin_city),
                   W.LAST_LEG(number=last.number or kind(last.kind), destination=last.destination))
    start, end = day(plan.start_date), day(plan.end_date)
    if start and end and (end - start).days >= 1 and not c.request.home_stay:  # going home: a bed there
        covered = sum(s.nights for s in plan.stays)
        if covered < (end - start).days:
            report.add(Category.INCOMPLETE, "stays", W.BEDS(covered=covered, nights=(end - start).days),
                       W.STAYS(names=", ".join(s.name for s in plan.stays) or W.NONE()))


def rooms_for(travellers: int) -> int:
    return max(1, math.ceil(travellers / 2))
