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
from agent_core.offline.date_atoms import Atom, atoms, forward, next_dom
from agent_core.offline.numbers import to_int

_MONTH_ONLY = re.compile(r"\bin\s+(?P<mn>jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
                         r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|"
                         r"(?<![\d一二三四五六七八九十])(?P<m>\d{1,2}|十[一二]?|[一二三四五六七八九])\s*月(?:份)?(?!\s*\d|\s*[一二三四五六七八九十两]+\s*[日号])", re.I)
_MONTH_RELATIVE = re.compile(r"(?P<after>下下个?月|\bthe month after next\b)|(?P<next>下个?月|\bnext month\b)|"
                             r"这个?月|本月|\bthis month\b", re.I)


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


def _pair_range(left: Atom, right: Atom, today: date) -> tuple[date, date] | None:
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
        start = next_dom(today, left.dom)
        end = next_dom(start, right.dom) if start else None
        return (start, end) if start and end else None
    if left.day is None:
        return None
    if right.dom is not None and right.month is None:  # "Dec 5-8", "3月12日至14日", "2027-03-12 to 14"
        try:
            end = left.day.replace(day=right.dom)
        except ValueError:
            return None
        if end < left.day:
            end = next_dom(left.day, right.dom) or end
        return left.day, end
    if right.day is None:
        return None
    end = right.day
    if right.year is None and right.month is not None and end < left.day:
        end = forward(left.day, right.month, right.dom or 1, None) or end
    return left.day, end


def read_when(text: str, today: date) -> When:
    found = atoms(text, today)
    spans = [(a.start, a.end) for a in found if a.kind != "bare"]
    hard: list[DateMention] = []
    soft: list[Atom] = []
    clash: WeekdayClash | None = None
    i = 0
    while i < len(found):
        a = found[i]
        b = found[i + 1] if i + 1 < len(found) else None
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


def _weekday_pair(a: Atom, b: Atom) -> bool:
    """One is a bare weekday, the other a date with its month and day written."""
    return ((a.weekday is not None and b.month is not None and b.weekday is None)
            or (b.weekday is not None and a.month is not None and a.weekday is None)
            or (a.weekday is not None and b.kind == "day_en"))


def _mention(a: Atom, day: date, written: bool | None = None) -> DateMention:
    if written is None:
        written = a.month is not None or a.kind in ("day_zh", "holiday")
    return DateMention(day, a.start, a.end, a.year is not None, written)


def _month_only(text: str, today: date) -> date | None:
    if rel := _MONTH_RELATIVE.search(text):  # "next month", "下个月", "this month"
        ahead = 2 if rel.group("after") else 1 if rel.group("next") else 0
        months = today.month - 1 + ahead
        return date(today.year + months // 12, months % 12 + 1, 1)
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


_BARE_WEEKDAY = re.compile(r"(?:on\s+)?(?P<en>mon|tues|wednes|thurs|fri|satur|sun)day|(?:周|星期|礼拜)(?P<zh>[一二三四五六日天])", re.I)


def weekday_near(words: str | None, around: date | None) -> date | None:
    """The day a weekday said alone ("Saturday", "周六") means when a trip around `around` is on the
    table: that weekday within three days of it ("make it Saturday to Monday" for a trip from
    Friday the 11th: the 12th), not the next one from today. None when `words` is no bare weekday."""
    m = _BARE_WEEKDAY.fullmatch((words or "").strip())
    if m is None or around is None:
        return None
    weekday = w.WEEKDAY_EN[m.group("en")[:3].lower()] if m.group("en") else w.WEEKDAY_ZH[m.group("zh")]
    return around + timedelta(days=(weekday - around.weekday() + 3) % 7 - 3)
