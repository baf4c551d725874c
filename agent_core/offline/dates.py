"""Dates in Chinese and English requests, resolved against the run's "today".

Conventions (Monday starts a week, as on Chinese calendars):
- 周五 / Friday: the next Friday after today (a week ahead when today is Friday).
- 这周五 / 本周五: Friday of this week, which may be past (then the caller says so).
- 下周五 / next Friday: Friday of next week; 下下周五: the week after.
- 3月5日 / Dec 5 without a year: this year, or next year once the day has passed.
- 2026-12-05 / 2026年12月5日: exactly that day, past or not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from agent_core.offline.numbers import CN_NUM, EN_NUM, NUM, to_int

_WEEKDAY_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5,
               "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
_WEEKDAY_EN = {"mon": 0, "tue": 1, "wed": 2, "thu": 3, "fri": 4, "sat": 5, "sun": 6, "weekend": 5}
_MONTHS_EN = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
              "sep": 9, "oct": 10, "nov": 11, "dec": 12}
_MONTH_NAME = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
               r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
_ORD = r"(?:st|nd|rd|th)?"
_RANGE_SEP = r"\s*(?:到|至|-|~|–|—|to|until|till|through)\s*"

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("iso", re.compile(r"(?P<y>\d{4})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*[日号]?")),
    ("zh_md", re.compile(rf"(?P<m>{NUM})\s*月\s*(?P<d>{NUM})\s*[日号]?")),
    ("en_md", re.compile(rf"\b(?P<mn>{_MONTH_NAME})\.?\s+(?P<d>\d{{1,2}}){_ORD}\b(?:,?\s*(?P<y>\d{{4}}))?", re.I)),
    ("en_dm", re.compile(rf"\b(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mn>{_MONTH_NAME})\b\.?(?:,?\s*(?P<y>\d{{4}}))?", re.I)),
    ("offset_zh", re.compile(rf"(?P<n>{NUM})\s*天(?:以?后|之后)")),
    ("offset_en", re.compile(rf"\bin\s+(?P<n>{EN_NUM})\s+days?\b|\b(?P<n2>{EN_NUM})\s+days?\s+(?:from\s+(?:now|today)|later)\b", re.I)),
    ("rel_zh", re.compile(r"大后天|后天|明天|明日|今天|今日|今晚|昨天|前天")),
    ("rel_en", re.compile(r"\bday after tomorrow\b|\btomorrow\b|\btoday\b|\btonight\b|\byesterday\b", re.I)),
    ("wd_zh", re.compile(r"(?P<pre>下下个?|下个?|这个?|本|上个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7末])")),
    ("wd_en", re.compile(r"\b(?P<pre>next|this|coming|on)?\s*(?P<wd>mon|tue|wed|thu|fri|sat|sun|weekend)(?:day|sday|nesday|rsday|urday)?\b", re.I)),
]
_REL_ZH = {"今天": 0, "今日": 0, "今晚": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3, "昨天": -1, "前天": -2}
_REL_EN = {"today": 0, "tonight": 0, "tomorrow": 1, "day after tomorrow": 2, "yesterday": -1}
_DAY_ONLY = re.compile(rf"{_RANGE_SEP}(?P<d>\d{{1,2}}|{CN_NUM})\s*(?:[日号]|{_ORD}\b)", re.I)


@dataclass(frozen=True, slots=True)
class DateMention:
    day: date
    start: int  # span in the text
    end: int
    explicit_year: bool = False


def _month_day(today: date, month: int, day: int, year: int | None) -> date | None:
    try:
        if year is not None:
            return date(year, month, day)
        candidate = date(today.year, month, day)
        return candidate if candidate >= today else date(today.year + 1, month, day)
    except ValueError:
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


def _resolve(kind: str, m: re.Match[str], today: date) -> tuple[date | None, bool]:
    g = m.groupdict()
    if kind == "iso":
        try:
            return date(int(g["y"]), int(g["m"]), int(g["d"])), True
        except ValueError:
            return None, True
    if kind == "zh_md":
        month, day = to_int(g["m"]), to_int(g["d"])
        if month is None or day is None:
            return None, False
        return _month_day(today, month, day, None), False
    if kind in ("en_md", "en_dm"):
        month = _MONTHS_EN[g["mn"][:3].lower()]
        year = int(g["y"]) if g.get("y") else None
        return _month_day(today, month, int(g["d"]), year), year is not None
    if kind in ("offset_zh", "offset_en"):
        n = to_int(g.get("n") or g.get("n2") or "")
        return (today + timedelta(days=n) if n is not None else None), False
    if kind == "rel_zh":
        return today + timedelta(days=_REL_ZH[m.group(0)]), False
    if kind == "rel_en":
        return today + timedelta(days=_REL_EN[m.group(0).lower()]), False
    if kind == "wd_zh":
        return _weekday(today, g["pre"] or "", _WEEKDAY_ZH[g["wd"]]), False
    wd = g["wd"].lower()
    return _weekday(today, (g["pre"] or "").lower(), _WEEKDAY_EN[wd]), False


def find_dates(text: str, today: date) -> list[DateMention]:
    """Every date mentioned in `text`, in order of appearance, without overlapping spans.

    A bare day after a range separator ("12月5日到8日", "Dec 5-8th") takes the month of the
    date before it.
    """
    taken: list[tuple[int, int]] = []
    found: list[DateMention] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            day, explicit = _resolve(kind, m, today)
            if day is None:
                continue
            taken.append((m.start(), m.end()))
            found.append(DateMention(day, m.start(), m.end(), explicit))
    found.sort(key=lambda d: d.start)
    out: list[DateMention] = []
    for mention in found:
        out.append(mention)
        tail = _DAY_ONLY.match(text, mention.end)
        if tail and not any(f.start == tail.start("d") for f in found):
            n = to_int(tail.group("d"))
            try:
                end_day = mention.day.replace(day=n) if n else None
            except ValueError:
                end_day = None
            if end_day is not None and end_day >= mention.day:
                out.append(DateMention(end_day, tail.start("d"), tail.end(), mention.explicit_year))
    return out
