"""A plan as files: an iCalendar file (.ics) and a CSV cost sheet.

The calendar has one event per leg, stay and visit, in the destination's time zone (the plan's
`timezone`, else the bot's); on a team trip each traveller's own legs are events of their own,
named after them. The cost sheet has one row per person and item — their legs, their share of
what the party shares, their tickets — and a total row equal to the plan's total.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.surface import Attachment
from tools.plan import Leg, TripPlan

if TYPE_CHECKING:
    from icalendar import Event

VISIT_MINUTES = 60  # a visit without a duration still takes an hour in the calendar


def plan_files(plan: TripPlan, default_tz: str) -> list[Attachment]:
    stem = "team-trip" if plan.party else "trip"
    return [
        Attachment(f"{stem}-{plan.start_date}.ics", "text/calendar", calendar_text(plan, default_tz), plan.title),
        Attachment(f"{stem}-{plan.start_date}-costs.csv", "text/csv", cost_sheet(plan), plan.title),
    ]


def file_body(file: Attachment, lang: str) -> str:
    """An outbox row's body for a file (bot.delivery.outbox delivers it with Surface.post_file)."""
    return json.dumps({"filename": file.filename, "mime": file.mime, "content": file.content, "title": file.title,
                       "lang": lang}, ensure_ascii=False)


def file_from_body(body: str) -> Attachment:
    data = json.loads(body)
    return Attachment(data["filename"], data["mime"], data["content"], data.get("title") or "")


def calendar_text(plan: TripPlan, default_tz: str) -> str:
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
        events.append(_leg_event(leg, tz, f"{uid}-leg-{i}", who=""))
    for k, person in enumerate(plan.party):
        for i, leg in enumerate(person.legs):
            events.append(_leg_event(leg, tz, f"{uid}-p{k}-leg-{i}", who=person.name))
    for i, stay in enumerate(plan.stays):
        ev = _event()
        ev.add("uid", f"{uid}-stay-{i}@tripbot")
        ev.add("summary", f"🏨 {stay.name}")
        ev.add("location", f"{stay.name}, {stay.city}")
        ev.add("dtstart", date.fromisoformat(stay.checkin_date))
        ev.add("dtend", date.fromisoformat(stay.checkout_date))
        events.append(ev)
    for i, visit in enumerate(plan.visits):
        start = datetime.strptime(f"{visit.date} {visit.start or '09:00'}", "%Y-%m-%d %H:%M").replace(tzinfo=tz)
        ev = _event()
        ev.add("uid", f"{uid}-visit-{i}@tripbot")
        ev.add("summary", f"📍 {visit.name}")
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


def _leg_event(leg: Leg, tz: ZoneInfo, uid: str, who: str) -> Event:
    what = " ".join(p for p in (leg.number or leg.kind, f"{leg.origin} → {leg.destination}") if p)
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


def cost_rows(plan: TripPlan) -> list[tuple[str, str, str, str, float]]:
    """(person, item, kind, date, CNY) for every person and item; the shares add up to the total."""
    people = [p.name for p in plan.party] or ["all"]
    n = len(people) if plan.party else 1
    rows: list[tuple[str, str, str, str, float]] = []
    for person in plan.party:
        for leg in person.legs:
            rows.append((person.name, f"{leg.number or leg.kind} {leg.origin} → {leg.destination}", leg.kind,
                         leg.depart[:10], round(leg.price, 2)))
    shared: list[tuple[str, str, str, float]] = [(f"{leg.number or leg.kind} {leg.origin} → {leg.destination}", leg.kind, leg.depart[:10], leg.price)
              for leg in plan.legs]
    shared += [(f"{s.name} ({s.nights} nights)", "stay", s.checkin_date, s.total) for s in plan.stays]
    for item, kind, day, price in shared:
        for i, share in enumerate(_split(price, n)):
            rows.append((people[i], item, kind, day, share))
    for v in plan.visits:
        tickets = v.ticket_price if plan.party else v.ticket_price * plan.travellers
        if tickets:
            for name in people:
                rows.append((name, v.name, "ticket", v.date, round(tickets, 2)))
    return rows


def cost_sheet(plan: TripPlan) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["person", "item", "kind", "date", f"cost_{plan.currency.lower()}"])
    rows = cost_rows(plan)
    writer.writerows((p, item, kind, day, f"{cost:.2f}") for p, item, kind, day, cost in rows)
    writer.writerow(["total", "", "total", "", f"{sum(r[4] for r in rows):.2f}"])
    return out.getvalue()


def _split(amount: float, n: int) -> list[float]:
    """Even shares in cents; the cents that do not divide go to the first ones, so they add up."""
    cents = round(amount * 100)
    base, extra = divmod(cents, n)
    return [(base + (1 if i < extra else 0)) / 100 for i in range(n)]


def _zone(name: str | None, default: str) -> ZoneInfo:
    for candidate in (name, default):
        if candidate:
            try:
                return ZoneInfo(candidate)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    return ZoneInfo("UTC")
