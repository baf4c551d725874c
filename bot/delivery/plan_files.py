"""A plan as files: an iCalendar file (.ics) and a CSV cost sheet.

The calendar has one event per leg, stay and visit, in the destination's time zone (the plan's
`timezone`, else the bot's); on a team trip each traveller's own legs are events of their own,
named after them. The cost sheet has the rows of the plan's card (tools.plan_costs, worded by
agent_core.plan_words): one per priced item, or on a team trip one per traveller and item (their
legs, their part of what the party shares, their tickets), and a total row equal to the card's.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from agent_core.lang import plural
from agent_core.plan_words import place, priced, total_text
from bot.surface import Attachment
from tools.plan import Leg, TripPlan
from tools.plan_costs import CostLine, plan_costs

if TYPE_CHECKING:
    from icalendar import Event

VISIT_MINUTES = 60  # a visit without a duration still takes an hour in the calendar


def plan_files(plan: TripPlan, default_tz: str, lang: str = "en") -> list[Attachment]:
    """`lang`: the conversation's; an English plan's places have their English names beside."""
    stem = "team-trip" if plan.party else "trip"
    return [
        Attachment(f"{stem}-{plan.start_date}.ics", "text/calendar", calendar_text(plan, default_tz, lang), plan.title),
        Attachment(f"{stem}-{plan.start_date}-costs.csv", "text/csv", cost_sheet(plan, lang), plan.title),
    ]


def file_body(file: Attachment, lang: str) -> str:
    """An outbox row's body for a file (bot.delivery.outbox delivers it with Surface.post_file)."""
    return json.dumps({"filename": file.filename, "mime": file.mime, "content": file.content, "title": file.title,
                       "lang": lang}, ensure_ascii=False)


def file_from_body(body: str) -> Attachment:
    data = json.loads(body)
    return Attachment(data["filename"], data["mime"], data["content"], data.get("title") or "")


def calendar_text(plan: TripPlan, default_tz: str, lang: str = "en") -> str:
    # imported when the first calendar is made, not at start: it costs a few hundred ms there,
    # and the bot must say why it cannot start within 5 s (tests/test_startup.py)
    from icalendar import Calendar

    tz = _zone(plan.timezone, default_tz)
    uid = hashlib.sha1(plan.model_dump_json().encode()).hexdigest()[:16]
    cal = Calendar()
    cal.add("prodid", "-//tripbot//team trips//EN")
    cal.add("version", "2.0")
    cal.add("x-wr-calname", plan.title)
    cal.add("x-wr-timezone", tz.key)
    events: list[Event] = []
    for i, leg in enumerate(plan.legs):
        events.append(_leg_event(leg, tz, f"{uid}-leg-{i}", who="", lang=lang))
    for k, person in enumerate(plan.party):
        for i, leg in enumerate(person.legs):
            events.append(_leg_event(leg, tz, f"{uid}-p{k}-leg-{i}", who=person.name, lang=lang))
    for i, stay in enumerate(plan.stays):
        ev = _event()
        ev.add("uid", f"{uid}-stay-{i}@tripbot")
        ev.add("summary", f"🏨 {place(stay.name, lang)} ({plural(stay.nights, 'night', lang)})")
        ev.add("location", f"{stay.name}, {stay.city}")
        ev.add("dtstart", date.fromisoformat(stay.checkin_date))
        ev.add("dtend", date.fromisoformat(stay.checkout_date))
        events.append(ev)
    for i, visit in enumerate(plan.visits):
        start = datetime.strptime(f"{visit.date} {visit.start or '09:00'}", "%Y-%m-%d %H:%M").replace(tzinfo=tz)
        ev = _event()
        ev.add("uid", f"{uid}-visit-{i}@tripbot")
        ev.add("summary", f"📍 {place(visit.name, lang)}")
        ev.add("location", f"{visit.name}, {visit.city}")
        ev.add("dtstart", start)
        ev.add("dtend", start + timedelta(minutes=visit.duration_min or VISIT_MINUTES))
        events.append(ev)
    stamp = datetime.strptime(plan.start_date, "%Y-%m-%d").replace(tzinfo=tz)  # stable: same plan, same file
    for ev in events:
        ev.add("dtstamp", stamp)
        cal.add_component(ev)
    cal.add_missing_timezones()
    return cal.to_ical().decode()


def _leg_event(leg: Leg, tz: ZoneInfo, uid: str, who: str, lang: str) -> Event:
    route = f"{place(leg.origin, lang)} → {place(leg.destination, lang)}"
    what = " ".join(p for p in (leg.number or leg.kind, route) if p)
    ev = _event()
    ev.add("uid", f"{uid}@tripbot")
    ev.add("summary", f"{who}: {what}" if who else what)
    ev.add("location", leg.origin)
    ev.add("dtstart", datetime.strptime(leg.depart, "%Y-%m-%d %H:%M").replace(tzinfo=tz))
    ev.add("dtend", datetime.strptime(leg.arrive, "%Y-%m-%d %H:%M").replace(tzinfo=tz))
    if who:
        ev.add("categories", [who])
    return ev


def _event() -> Event:
    from icalendar import Event  # see calendar_text

    return Event()


@dataclass(frozen=True, slots=True)
class CostRow:
    person: str  # the traveller who pays it; "all" when a plan has no party (everyone pays the same)
    item: str
    kind: str  # leg's kind (train, flight, ...) | stay | ticket
    date: str
    counted: str  # how the line's amount comes about: "¥553 × 2 people = ¥1,106"
    cost: float  # what this row adds to the total


def cost_rows(plan: TripPlan, lang: str = "en") -> list[CostRow]:
    """The card's rows (tools.plan_costs): one per line; on a team trip one per traveller and line,
    each traveller's rows adding up to what the card says they pay."""
    costs = plan_costs(plan)
    if not plan.party:
        return [_row("all", line, plan, lang, line.amount) for line in costs.lines]
    return [_row(part.who, part.line, plan, lang, part.amount) for part in costs.parts]


def _row(person: str, line: CostLine, plan: TripPlan, lang: str, cost: float) -> CostRow:
    if line.kind == "stay":
        stay = plan.stays[line.index]
        item, kind, day = place(stay.name, lang), "stay", stay.checkin_date
    elif line.kind == "ticket":
        visit = plan.visits[line.index]
        item, kind, day = place(visit.name, lang), "ticket", visit.date
    else:
        legs = next(p.legs for p in plan.party if p.name == line.who) if line.who else plan.legs
        leg = legs[line.index]
        item = f"{leg.number or leg.kind} {place(leg.origin, lang)} → {place(leg.destination, lang)}"
        kind, day = leg.kind, leg.depart[:10]
    return CostRow(person, item, kind, day, priced(line, lang, plan.currency), cost)


def cost_sheet(plan: TripPlan, lang: str = "en") -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["person", "item", "kind", "date", "counted", f"cost_{plan.currency.lower()}"])
    writer.writerows((r.person, r.item, r.kind, r.date, r.counted, f"{r.cost:.2f}") for r in cost_rows(plan, lang))
    costs = plan_costs(plan)
    writer.writerow(["total", "", "total", "", total_text(costs, lang, plan.currency), f"{costs.total:.2f}"])
    return out.getvalue()


def _zone(name: str | None, default: str) -> ZoneInfo:
    for candidate in (name, default):
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return ZoneInfo("UTC")
