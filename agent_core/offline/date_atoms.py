"""Date atoms: each piece of text the date grammar (agent_core.offline.dates) pairs, resolved on
its own where it can be — a full date, a month and day, a day of the month, a weekday, a day
counted from today, a weekend or a holiday — with what pairing needs (the month and day as
written, the weekday, a length a weekend implies). The words are in agent_core.offline.date_words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from agent_core.offline import date_words as w
from agent_core.offline.lunar_dates import lunar_day, solar
from agent_core.offline.numbers import to_int


@dataclass(slots=True)
class Atom:
    kind: str
    start: int
    end: int
    day: date | None = None  # resolved, when it can be on its own
    month: int | None = None  # the month and day written, for pairing
    dom: int | None = None  # day of month
    year: int | None = None  # written
    weekday: int | None = None
    days: int | None = None  # a length implied (weekend)
    soft: bool = False  # a weekend/holiday word: a start only when no other date is given
    ordinal: bool = False  # "12th", "12号": a day of the month even without a month


def forward(today: date, month: int, day: int, year: int | None) -> date | None:
    """The date, with the year inferred forward from today when it is not written."""
    try:
        if year is not None:
            return date(year, month, day)
        candidate = date(today.year, month, day)
        return candidate if candidate >= today else date(today.year + 1, month, day)
    except ValueError:
        return None


def next_dom(today: date, dom: int, month_offset: int | None = None) -> date | None:
    """The next day `dom` of a month from today on (or of this/next month when given)."""
    year, month = today.year, today.month
    for k in range(0 if month_offset is None else month_offset, 14):
        y, m = year + (month - 1 + k) // 12, (month - 1 + k) % 12 + 1
        try:
            candidate = date(y, m, dom)
        except ValueError:
            if month_offset is not None:
                return None
            continue
        if candidate >= today or month_offset is not None:
            return candidate
    return None


def weekday_of(today: date, prefix: str, weekday: int) -> date:
    monday = today - timedelta(days=today.weekday())
    if prefix.startswith("下下"):
        return monday + timedelta(days=14 + weekday)
    if prefix.startswith("下") or prefix == "next":
        return monday + timedelta(days=7 + weekday)
    if prefix.startswith("上"):
        return monday - timedelta(days=7 - weekday)
    if prefix.startswith(("这", "本")):
        return monday + timedelta(days=weekday)
    ahead = (weekday - today.weekday()) % 7 or 7
    if prefix in ("this", "coming") and weekday == today.weekday():
        ahead = 0
    return today + timedelta(days=ahead)


def _year(raw: str | None) -> int | None:
    if not raw:
        return None
    value = int(raw)
    return value + 2000 if value < 100 else value


def _atom(kind: str, m: re.Match[str], today: date) -> Atom | None:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    a = Atom(kind, m.start(), m.end())
    if kind == "ymd":
        a.year, a.month, a.dom = int(g["y"]), int(g.get("m") or g["m2"]), int(g.get("d") or g["d2"])
    elif kind == "dmy":
        d, mo = int(g["d"]), int(g["m"])
        a.year, a.month, a.dom = _year(g["y"]), *((d, mo) if mo > 12 >= d else (mo, d))
    elif kind in ("zh_md", "dm"):
        day_n, month_n = to_int(g["d"]), to_int(g["m"])
        if day_n is None or month_n is None:
            return None
        a.month, a.dom = (day_n, month_n) if kind == "dm" and month_n > 12 >= day_n else (month_n, day_n)
    elif kind in ("en_md", "en_dm"):
        a.month, a.dom, a.year = w.MONTHS_EN[g["mn"][:3].lower()], int(g["d"]), _year(g.get("y"))
    elif kind == "holiday":
        return _holiday(a, g, today)
    elif kind == "lunar":  # a calendar date written in the lunar calendar
        a.day = lunar_day(g, today)
        if a.day is not None:
            a.month, a.dom = a.day.month, a.day.day
        return a if a.day else None
    elif kind == "weekend":
        long = bool(g.get("long") or g.get("long_en"))
        prefix = (g.get("pre") or g.get("pre_en") or "").lower()
        a.day, a.days, a.soft = weekday_of(today, prefix, 4 if long else 5), 3 if long else 2, True
        return a
    elif kind in ("offset_zh", "offset_en"):
        n = to_int(g.get("n") or g.get("n2") or "")
        unit = (g.get("unit") or g.get("unit2") or "").lower()
        if n is None:
            return None
        a.day = today + timedelta(days=n * (7 if unit[:1] in ("w", "周", "个", "星", "礼") else 1))
        return a
    elif kind == "rel_zh":
        a.day = today + timedelta(days=w.REL_ZH[m.group(0)])
        return a
    elif kind == "rel_en":
        a.day = today + timedelta(days=w.REL_EN[m.group(0).lower().removeprefix("the ")])
        return a
    elif kind in ("wd_zh", "wd_en"):
        wd = w.WEEKDAY_ZH[g["wd"]] if kind == "wd_zh" else w.WEEKDAY_EN[g["wd"][:3].lower()]
        a.weekday, a.day = wd, weekday_of(today, (g.get("pre") or "").lower(), wd)
        return a
    elif kind == "day_zh":
        a.dom, a.ordinal = to_int(g["d"]), True
        pre = g.get("pre") or ""
        a.day = next_dom(today, a.dom or 0, 1 if pre.startswith("下") else 0 if pre else None) if a.dom else None
        return a if a.day else None
    elif kind == "day_en":
        a.dom, a.ordinal = int(g.get("d") or g["d2"]), True
        a.day = next_dom(today, a.dom)
        return a if a.day else None
    else:  # bare: a day of the month only as the first end of a range
        a.dom, a.ordinal = int(g["d"]), bool(g.get("ord"))
        return a if 1 <= a.dom <= 31 else None
    a.day = forward(today, a.month or 0, a.dom or 0, a.year) if a.month and a.dom else None
    return a if a.day else None


def _holiday(a: Atom, g: dict[str, str], today: date) -> Atom | None:
    name = next(k for k in w.HOLIDAY_WORDS if g.get(k))
    year = _year(g.get("y"))
    a.soft = True
    if name in w.HOLIDAYS:
        a.month, a.dom = w.HOLIDAYS[name]
        a.day = forward(today, a.month, a.dom, year)
        return a
    month, day = w.LUNAR_HOLIDAYS[name]
    years = [year] if year else [today.year, today.year + 1]
    a.day = next((d for y in years if (d := solar(y, month, day)) >= today or year), None)
    return a if a.day else None


def atoms(text: str, today: date) -> list[Atom]:
    taken: list[tuple[int, int]] = []
    out: list[Atom] = []
    for kind, pattern in w.ATOMS:
        for m in pattern.finditer(text):
            s, e = m.start(), m.end()
            while s < e and text[s].isspace():
                s += 1
            if s == e or any(s < te and ts < e for ts, te in taken):
                continue
            atom = _atom(kind, m, today)
            if atom is None:
                continue
            atom.start = s
            taken.append((s, e))
            out.append(atom)
    out.sort(key=lambda x: x.start)
    return out
