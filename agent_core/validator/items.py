"""Names and times of plan items, shared by the checks."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from tools.plan import HotelStay, Leg, Visit

_STATION_SUFFIX = re.compile(r"(?:火车站|高铁站|站|机场|国际机场|airport|station)$", re.I)
_SPACE = re.compile(r"[\s()（）·-]+")


def leg_name(i: int, leg: Leg) -> str:
    return f"legs[{i}] {leg.number or leg.kind} {leg.origin}→{leg.destination} {leg.depart}"


def stay_name(i: int, stay: HotelStay) -> str:
    return f"stays[{i}] {stay.name} ({stay.hotel_id}) {stay.checkin_date}→{stay.checkout_date}"


def visit_name(i: int, visit: Visit) -> str:
    return f"visits[{i}] {visit.name} ({visit.poi_id}) {visit.date} {visit.start or ''}".rstrip()


def place_key(name: str) -> str:
    """A station or airport name without the words people add or drop ("北京南站" == "北京南")."""
    key = _SPACE.sub("", name.strip().lower())
    prev = None
    while prev != key:
        prev, key = key, _STATION_SUFFIX.sub("", key)
    return key


def same_place(a: str, b: str) -> bool:
    ka, kb = place_key(a), place_key(b)
    return bool(ka) and ka == kb


def same_name(a: str, b: str) -> bool:
    """Names of one hotel or sight as written by a model: equal, or one contains the other."""
    ka, kb = place_key(a), place_key(b)
    return bool(ka and kb) and (ka == kb or ka in kb or kb in ka)


def moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.strptime(text.strip()[:16].replace("T", " "), "%Y-%m-%d %H:%M")
    except ValueError:
        return None


def day(text: str | None) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text.strip()[:10])
    except ValueError:
        return None


def visit_span(visit: Visit) -> tuple[datetime, datetime] | None:
    start = moment(f"{visit.date} {visit.start}") if visit.start else None
    if start is None:
        return None
    return start, start + timedelta(minutes=visit.duration_min or 0)
