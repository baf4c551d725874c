"""Whether a planned visit fits a sight's opening hours, read by the offline planner's parser (the
one that scheduled the visits): "08:30-17:00 周一闭馆" (closed on Mondays), "周六日 09:00-18:00"
(weekends only), "06:00-01:00" (open until 1 am the next day); "全天" and hours it cannot read
("日出-日落") count as always open.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent_core.offline.compose import opening
from agent_core.offline.options import Sight
from agent_core.validator.items import day, visit_span
from agent_core.validator.wording import WEEKDAYS, Text
from agent_core.validator.wording_facts import CLOSED_ON, OUTSIDE_HOURS
from tools.plan import Visit


def closed_reason(hours: str, visit: Visit) -> Text | None:
    """Why the place is not open for the whole planned visit (start + duration), or None."""
    when = day(visit.date)
    if when is None:
        return None
    sight = Sight(poi_id="", name="", hours=hours)
    today = opening(sight, when)
    span = visit_span(visit)
    if today is None and span is None:
        return CLOSED_ON(weekday=WEEKDAYS[when.weekday()], hours=hours)
    if span is None or (today is not None and _all_day(today)):
        return None
    start, end = span
    # after midnight, the visit may still be in the previous day's late opening
    windows = [w for w in (opening(sight, when - timedelta(days=1)), today) if w is not None]
    if any(opens <= start < closes and end <= closes for opens, closes in windows):
        return None
    if today is None:
        return CLOSED_ON(weekday=WEEKDAYS[when.weekday()], hours=hours)
    return OUTSIDE_HOURS(start=f"{start:%H:%M}", end=f"{end:%H:%M}", hours=hours)


def _all_day(window: tuple[datetime, datetime]) -> bool:
    opens, closes = window
    return opens.time() == datetime.min.time() and closes - opens >= timedelta(days=1)
