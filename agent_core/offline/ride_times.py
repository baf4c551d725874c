"""A ride earlier or later in the day than the plan's: "能不能晚点出发", "come back earlier".

Relative to the ride the last plan took (from an hour past it; earlier: one to four hours before
it, not the first ride of the day), or, before any plan, to the part of the day a traveller
would mean ("不要太早的车": from 10:00; "come back earlier": between 10:00 and 14:00). The result
is the request's departure or return window (agent_core.offline.request), which the planner's
choice of rides and the Validator read like any window said outright.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from agent_core.offline.request import TripRequest
from tools.plan import Leg, TripPlan

STEP = timedelta(hours=1)
WIDTH = timedelta(hours=4)  # "a bit earlier": within four hours before the plan's ride
LATE_START = "10:00"  # "leave later" with no plan to go by
NOT_EARLY = "09:30"  # "not great with early mornings"
EARLY_BACK = "14:00"  # "come back earlier" with no plan to go by: by then, not at dawn
EARLY_BACK_FROM = "10:00"
DAY_START = "06:00"


def moved(req: TripRequest, plan: TripPlan | None, *, leave: int, back: int) -> TripRequest:
    """`req` with its way there `leave` (+1 later, -1 earlier) and its way back `back` moved."""
    out, home = _rides(plan)
    if leave > 0:  # +2: "not great with early mornings": from mid-morning at the earliest
        later = _clock(out, STEP) or LATE_START
        req = replace(req, depart_after=max(later, NOT_EARLY) if leave > 1 else later, depart_before=None)
    elif leave < 0:  # a bit earlier, not the first train of the day
        req = replace(req, depart_after=_clock(out, -WIDTH) or DAY_START, depart_before=_clock(out, -STEP) or "09:00")
    if back > 0:
        req = replace(req, return_after=_clock(home, STEP) or "18:00", return_before=None)
    elif back < 0:  # a window of its own: the planner's default (after 15:00) must not hold
        req = replace(req, return_after=_clock(home, -WIDTH) or EARLY_BACK_FROM, return_before=_clock(home, -STEP) or EARLY_BACK)
    return req


def _rides(plan: TripPlan | None) -> tuple[Leg | None, Leg | None]:
    """The plan's way there and way back (a team plan's first traveller's)."""
    if plan is None:
        return None, None
    legs = plan.legs or (plan.party[0].legs if plan.party else [])
    return (legs[0] if legs else None), (legs[-1] if len(legs) > 1 else None)


def _clock(leg: Leg | None, by: timedelta) -> str | None:
    if leg is None:
        return None
    try:
        at = datetime.strptime(leg.depart, "%Y-%m-%d %H:%M") + by
    except ValueError:
        return None
    return at.strftime("%H:%M") if at.date().isoformat() == leg.depart[:10] else None
