"""The checks a team plan needs on top of one traveller's: each person's legs, and that the
party can actually meet (everyone in before the first shared item, nobody leaving before the
last one ends).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tools.plan import Leg, TravellerLegs, TripPlan

_FORMAT = "%Y-%m-%d %H:%M"


def _at(value: str | None) -> datetime | None:
    try:
        return datetime.strptime(value or "", _FORMAT)
    except ValueError:
        return None


def meeting_time(plan: TripPlan) -> datetime | None:
    """When everyone must be there: `meet_by`, else the first visit, else the first check-in day's evening."""
    if plan.meet_by:
        return _at(plan.meet_by)
    starts = [t for v in plan.visits if (t := _at(f"{v.date} {v.start or '09:00'}")) is not None]
    if starts:
        return min(starts)
    checkins = [t for s in plan.stays if (t := _at(f"{s.checkin_date} 23:59")) is not None]
    return min(checkins) if checkins else None


def parting_time(plan: TripPlan) -> datetime | None:
    """When the last shared item ends: nobody should leave before it."""
    ends = []
    for v in plan.visits:
        start = _at(f"{v.date} {v.start or '09:00'}")
        if start is not None:
            ends.append(start + timedelta(minutes=v.duration_min or 0))
    return max(ends) if ends else None


def outbound(person: TravellerLegs) -> list[Leg]:
    """The legs before the first one that heads home."""
    legs: list[Leg] = []
    for leg in person.legs:
        if leg.destination_city and _same_city(leg.destination_city, person.home_city):
            break
        legs.append(leg)
    return legs


def homeward(person: TravellerLegs) -> list[Leg]:
    return person.legs[len(outbound(person)):]


def party_problems(plan: TripPlan) -> list[str]:
    """What stops the party from meeting; empty for a one-person plan."""
    if not plan.party:
        return []
    problems: list[str] = []
    if plan.travellers != len(plan.party):
        problems.append(f"travellers is {plan.travellers} but the party has {len(plan.party)} people")
    names = [p.name.strip().lower() for p in plan.party]
    if len(set(names)) != len(names):
        problems.append("two travellers of the party have the same name: tell them apart (a mention or a surname)")
    meet, part = meeting_time(plan), parting_time(plan)
    for k, person in enumerate(plan.party):
        if not person.legs:
            problems.append(f"party[{k}] ({person.name}) has no legs from {person.home_city}")
            continue
        there = outbound(person)
        arrival = _at(there[-1].arrive) if there else None
        if meet is not None and arrival is not None and arrival > meet:
            problems.append(
                f"party[{k}] ({person.name}) arrives {there[-1].arrive}, after the party meets at {meet:{_FORMAT}}"
            )
        back = homeward(person)
        leaving = _at(back[0].depart) if back else None
        if part is not None and leaving is not None and leaving < part:
            problems.append(
                f"party[{k}] ({person.name}) leaves {back[0].depart}, before the last shared item ends at {part:{_FORMAT}}"
            )
    return problems


def _same_city(a: str, b: str) -> bool:
    a, b = a.strip().removesuffix("市").lower(), b.strip().removesuffix("市").lower()
    return a == b
