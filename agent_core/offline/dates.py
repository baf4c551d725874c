"""Dates as people write them, in Chinese and English, resolved against the run's "today".

`read_when(text, today)` says when a message wants to travel: a start day, an end day when a
range names one, a length the words imply (a weekend is two days, a long weekend three), a
month when only the month is given, and a weekday that disagrees with the date written next to
it. The words are found as atoms (agent_core.offline.date_words), then paired:

- ranges: "12–14 March", "12-14/3", "3月12日至14日", "from the 12th to the 14th",
  "15/01/2027 - 17/01/2027", "20th to 23rd of January", "周五到周日"; a day without a month
  takes the other end's month;
- a weekday with a date ("Saturday 2027-01-16", "2027-01-16（周六）"): the date wins, and a
  weekday that is not that date's is reported (`When.clash`) for the caller to ask about;
- a weekend or holiday word next to a written date gives only the length.

Conventions (Monday starts a week, as on Chinese calendars):
- 周五 / Friday: the next Friday after today (a week ahead when today is Friday).
- 这周五 / 本周五: Friday of this week, which may be past (then the caller says so).
- 下周五 / next Friday: Friday of next week; 下下周五: the week after. 下周末 / next weekend alike.
- a date without a year (3月5日, 12 March, the 12th): the first such day from today on.
- 2026-12-05 / 2026年12月5日 / 05/12/2026 (day first): exactly that day, past or not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from agent_core.offline import date_words as w
from agent_core.offline.numbers import to_int

_MONTH_ONLY = re.compile(r"\bin\s+(?P<mn>jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|"
                         r"(?<![\d一二三四五六七八九十])(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?:份)?(?!\s*\d|\s*[一二三四五六七八九十两]+\s*[日号])", re.I)


@dataclass(frozen=True, slots=True)
class DateMention:
    day: date
    start: int  # span in the text
    end: int
    explicit_year: bool = False
    written: bool = False  # a calendar date (month and day written out), not counted from today


@dataclass(frozen=True, slots=True)
class WeekdayClash:
    """A weekday written next to a date that falls on another weekday ("Friday 2027-01-16")."""

    said: int  # the weekday written, 0 = Monday
    day: date  # the date written (which wins)
    words: str  # the words as written


@dataclass(frozen=True, slots=True)
class When:
    start: date | None = None
    end: date | None = None  # the last day, when a range (or a second date) names it
    days: int | None = None  # a length the date words imply: weekend 2, long weekend 3
    month: date | None = None  # only a month was given ("in May"): its first day
    clash: WeekdayClash | None = None
    written: bool = False  # the start is a calendar date written out
    start_text: str | None = None
    mentions: tuple[DateMention, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()  # every piece of text read as a date


@dataclass(slots=True)
class _Atom:
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


def _forward(today: date, month: int, day: int, year: int | None) -> date | None:
    """The date, with the year inferred forward from today when it is not written."""
    try:
        if year is not None:
            return date(year, month, day)
        candidate = date(today.year, month, day)
        return candidate if candidate >= today else date(today.year + 1, month, day)
    except ValueError:
        return None


def _next_dom(today: date, dom: int, month_offset: int | None = None) -> date | None:
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


def _weekday(today: date, prefix: str, weekday: int) -> date:
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


def _atom(kind: str, m: re.Match[str], today: date) -> _Atom | None:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    a = _Atom(kind, m.start(), m.end())
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
    elif kind == "weekend":
        long = bool(g.get("long") or g.get("long_en"))
        prefix = (g.get("pre") or g.get("pre_en") or "").lower()
        a.day, a.days, a.soft = _weekday(today, prefix, 4 if long else 5), 3 if long else 2, True
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
        a.weekday, a.day = wd, _weekday(today, (g.get("pre") or "").lower(), wd)
        return a
    elif kind == "day_zh":
        a.dom, a.ordinal = to_int(g["d"]), True
        pre = g.get("pre") or ""
        a.day = _next_dom(today, a.dom or 0, 1 if pre.startswith("下") else 0 if pre else None) if a.dom else None
        return a if a.day else None
    elif kind == "day_en":
        a.dom, a.ordinal = int(g.get("d") or g["d2"]), True
        a.day = _next_dom(today, a.dom)
        return a if a.day else None
    else:  # bare: a day of the month only as the first end of a range
        a.dom, a.ordinal = int(g["d"]), bool(g.get("ord"))
        return a if 1 <= a.dom <= 31 else None
    a.day = _forward(today, a.month or 0, a.dom or 0, a.year) if a.month and a.dom else None
    return a if a.day else None


def _holiday(a: _Atom, g: dict[str, str], today: date) -> _Atom | None:
    name = next(k for k in w.HOLIDAY_WORDS if g.get(k))
    year = _year(g.get("y"))
    a.soft = True
    if name in w.HOLIDAYS:
        a.month, a.dom = w.HOLIDAYS[name]
        a.day = _forward(today, a.month, a.dom, year)
        return a
    table = w.LUNAR_HOLIDAYS[name]
    years = [year] if year else [today.year, today.year + 1]
    a.day = next((table[y] for y in years if y in table and (year or table[y] >= today)), None)
    return a if a.day else None


def _atoms(text: str, today: date) -> list[_Atom]:
    taken: list[tuple[int, int]] = []
    out: list[_Atom] = []
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


def _pair_range(left: _Atom, right: _Atom, today: date) -> tuple[date, date] | None:
    """The two ends of "left SEP right", each completed from the other; None when they make no range."""
    if left.weekday is not None and right.weekday is not None and left.day and left.kind == right.kind:
        return left.day, left.day + timedelta(days=(right.weekday - left.weekday) % 7)
    if left.kind == "bare" and right.kind == "bare":
        return None
    if left.dom is not None and left.month is None:  # "12–14 March", "the 12th to the 14th", "12-14/3"
        if right.month is not None and right.day is not None:
            month, year = right.month, right.day.year
            if left.dom > (right.dom or 0):
                month, year = (month - 1, year) if month > 1 else (12, year - 1)
            try:
                return date(year, month, left.dom), right.day
            except ValueError:
                return None
        if not (left.ordinal and right.ordinal and right.month is None and right.dom):
            return None
        start = _next_dom(today, left.dom)
        end = _next_dom(start, right.dom) if start else None
        return (start, end) if start and end else None
    if left.day is None:
        return None
    if right.dom is not None and right.month is None:  # "Dec 5-8", "3月12日至14日", "2027-03-12 to 14"
        try:
            end = left.day.replace(day=right.dom)
        except ValueError:
            return None
        if end < left.day:
            end = _next_dom(left.day, right.dom) or end
        return left.day, end
    if right.day is None:
        return None
    end = right.day
    if right.year is None and right.month is not None and end < left.day:
        end = _forward(left.day, right.month, right.dom or 1, None) or end
    return left.day, end


def read_when(text: str, today: date) -> When:
    atoms = _atoms(text, today)
    spans = [(a.start, a.end) for a in atoms if a.kind != "bare"]
    hard: list[DateMention] = []
    soft: list[_Atom] = []
    clash: WeekdayClash | None = None
    i = 0
    while i < len(atoms):
        a = atoms[i]
        b = atoms[i + 1] if i + 1 < len(atoms) else None
        between = text[a.end : b.start] if b else ""
        if b is not None and w.RANGE_SEP.match(between) and not (a.soft or b.soft):
            pair = _pair_range(a, b, today)
            if pair is not None and pair[1] >= pair[0]:
                written = a.month is not None or b.month is not None
                hard += [_mention(a, pair[0], written), _mention(b, pair[1], written)]
                spans += [(a.start, b.end)]
                i += 2
                continue
        if b is not None and _weekday_pair(a, b) and w.WEEKDAY_JOIN.match(between):
            named, dated = (a, b) if a.weekday is not None else (b, a)
            if dated.day is not None and named.weekday is not None:
                if dated.day.weekday() != named.weekday:
                    clash = WeekdayClash(named.weekday, dated.day, text[min(a.start, b.start) : max(a.end, b.end)])
                hard.append(_mention(dated, dated.day))
                spans.append((min(a.start, b.start), max(a.end, b.end)))
                i += 2
                continue
        if a.soft:
            soft.append(a)
        elif a.kind != "bare" and a.day is not None:
            hard.append(_mention(a, a.day))
        i += 1
    days = next((s.days for s in soft if s.days), None)
    month = _month_only(text, today) if not hard and not soft else None
    if not hard and soft:
        first = soft[0]
        assert first.day is not None
        hard.append(_mention(first, first.day))
    spans = [sp for sp in spans if sp[0] < sp[1]]
    if not hard:
        return When(days=days, month=month, spans=tuple(spans))
    start = hard[0]
    end = hard[1].day if len(hard) > 1 and hard[1].day > start.day else None
    return When(start=start.day, end=end, days=days, clash=clash, written=start.written,
                start_text=text[start.start : start.end], mentions=tuple(hard), spans=tuple(spans))


def _weekday_pair(a: _Atom, b: _Atom) -> bool:
    """One is a bare weekday, the other a date with its month and day written."""
    return ((a.weekday is not None and b.month is not None and b.weekday is None)
            or (b.weekday is not None and a.month is not None and a.weekday is None)
            or (a.weekday is not None and b.kind == "day_en"))


def _mention(a: _Atom, day: date, written: bool | None = None) -> DateMention:
    if written is None:
        written = a.month is not None or a.kind in ("day_zh", "holiday")
    return DateMention(day, a.start, a.end, a.year is not None, written)


def _month_only(text: str, today: date) -> date | None:
    m = _MONTH_ONLY.search(text)
    if m is None:
        return None
    month = w.MONTHS_EN[m.group("mn")[:3].lower()] if m.group("mn") else to_int(m.group("m"))
    if not month or not 1 <= month <= 12:
        return None
    first = date(today.year, month, 1)
    return first if month >= today.month else date(today.year + 1, month, 1)


def find_dates(text: str, today: date) -> list[DateMention]:
    """The start and (when given) the end a text names, in that order."""
    when = read_when(text, today)
    return [m for m in when.mentions if m.day in (when.start, when.end)][:2] if when.start else []
