"""The trip's length as the person asked for it, read here on its own.

The planner's reading of the request (agent_core.offline.request, which read_constraints also
uses) decides how long the plan is; if that reading is wrong, every check built on it agrees
with the wrong plan (a "3-day trip" read as a day trip was graded 非常满意). So this check reads
the length again with its own patterns, from what the person wrote about this trip (the
request state's words: the request, the answers, the changes since — "one more night" moves
the length), and a plan whose dates span a different number of nights cannot get the best
verdict: it is an unmet need (基本满意但未满足用户特定需求).

Registered in Validator.assess (agent_core/validator/validator.py), after the PlanChecker: a
finding on the same item from check_needs is not repeated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from agent_core.offline.changes import read_relative
from agent_core.offline.numbers import to_int
from agent_core.offline.state import RequestState
from agent_core.offline.wishes import read_wishes
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.items import day
from agent_core.validator.wording import Phrase
from agent_core.validator.wording_plan import NIGHTS
from tools.plan import TripPlan

ITEM = "start_date..end_date"
REQUESTED = Phrase("need.length.requested", "用户写的是“{words}”（{nights} 晚）", 'the person wrote "{words}" ({nights} nights)')

_N = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
_EN_N = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fourteen)"
# 3天 / 三天两晚 / 3天2夜 / 3日游, not 3天后 (a date), 3天前, the day of 3月5日, the end of 3月12日至14日,
# or 第二天 (a day of the trip)
_ZH_DAYS = re.compile(rf"(?<![月\d零〇一二两三四五六七八九十至到~\-–—第])(?P<d>{_N})\s*(?:个)?(?:天|日(?!期))(?!\s*(?:以?后|之后|前|内))(?:\s*(?P<n>{_N})\s*[晚夜])?")
_ZH_NIGHTS = re.compile(rf"(?:住|待|呆|过)\s*(?P<n>{_N})\s*(?:个)?[晚夜]|(?P<n2>{_N})\s*(?:个)?晚(?!上|饭|餐|点)")
_ZH_WEEK = re.compile(rf"(?P<n>{_N})?\s*(?:个)?(?:星期|礼拜|周)(?![一二三四五六日天末1-7])")
# "3-day", "3 days", "three days", not "in 3 days" / "3 days from now" / "3 days later" (dates)
_EN_DAYS = re.compile(rf"(?<!\bin )\b(?P<d>{_EN_N})[\s-]+days?\b(?!\s+(?:from\s+(?:now|today)|later|ago|before|after))", re.I)
_EN_NIGHTS = re.compile(rf"\b(?P<n>{_EN_N}|a|one)[\s-]+nights?\b", re.I)
_EN_WEEK = re.compile(rf"\b(?P<n>{_EN_N}|a|one)[\s-]+weeks?\b", re.I)
_LONG_WEEKEND = re.compile(r"long[\s-]weekend|小长假", re.I)
_WEEKEND = re.compile(r"\bweekend\b|周末", re.I)
_DAY_TRIP = re.compile(r"(?<![\w-])(?:a\s+)?day[\s-]trip|一日游|当天往返|当日往返|当天回(?:来|去|家)?|当日回(?:来|去)?|"
                       r"\bsame[\s-]day (?:return|back|trip)\b|\b(?:back|return|home) the same day\b", re.I)


@dataclass(frozen=True, slots=True)
class RequestedLength:
    nights: int
    words: str  # what the person wrote


def _count(text: str | None) -> int | None:
    if text is None:
        return None
    return 1 if text.lower() in ("a", "an") else to_int(text)


def read_length(text: str) -> RequestedLength | None:
    """The length one message asks for, in nights; None when it names none."""
    if m := _ZH_DAYS.search(text):
        days, nights = _count(m.group("d")), _count(m.group("n"))
        if nights is not None:
            return RequestedLength(nights, m.group(0))
        if days:
            return RequestedLength(days - 1, m.group(0))
    if m := _ZH_NIGHTS.search(text):
        n = _count(m.group("n") or m.group("n2"))
        if n:
            return RequestedLength(n, m.group(0))
    if m := _EN_NIGHTS.search(text):
        n = _count(m.group("n"))
        if n:
            return RequestedLength(n, m.group(0))
    if m := _EN_DAYS.search(text):
        d = _count(m.group("d"))
        if d:
            return RequestedLength(d - 1, m.group(0))
    for week in (_ZH_WEEK, _EN_WEEK):
        if (m := week.search(text)) and (m.group("n") or re.search(r"一周|一个?星期|a week|one week", text, re.I)):
            n = _count(m.group("n")) or 1
            return RequestedLength(7 * n - 1, m.group(0))
    if m := _DAY_TRIP.search(text):
        return RequestedLength(0, m.group(0))
    if m := _LONG_WEEKEND.search(text):
        return RequestedLength(2, m.group(0))
    if m := _WEEKEND.search(text):
        return RequestedLength(1, m.group(0))
    return None


def length_in(texts: Sequence[str]) -> RequestedLength | None:
    """The length the person's words come to, in order: a length stated replaces the one before,
    a change relative to it ("one more night", "少住一晚") moves it."""
    found: RequestedLength | None = None
    for text in texts:
        rel = read_relative(text)
        stated = read_length(rel.blank(text))  # "晚一天出发" moves the trip; it is not a one-day trip
        if stated is not None:
            found = stated
        elif _ends_on_a_day(text):  # "come back Sunday": the length is the dates' now, not words'
            found = None
        if rel.nights and found is not None:
            found = RequestedLength(max(0, found.nights + rel.nights), f"{found.words} + {text.strip()}")
    return found


def _ends_on_a_day(text: str) -> bool:
    """The text names the day home alone ("can we come back Sunday evening instead?")."""
    said = read_wishes(text, date.today())
    return said.end is not None and said.start is None


def requested_length(texts: Sequence[str]) -> RequestedLength | None:
    """The last length the person stated (a later message changes an earlier one)."""
    return length_in(texts)


def check_requested_length(plan: TripPlan, state: RequestState, report: CheckReport) -> None:
    """The plan's nights against the length the person's words about this trip come to."""
    wanted = length_in(state.texts)
    start, end = day(plan.start_date), day(plan.end_date)
    if wanted is None or start is None or end is None:
        return
    span = (end - start).days
    if span == wanted.nights or any(f.item == ITEM and f.category is Category.NEED for f in report.findings):
        return
    report.add(Category.NEED, ITEM, NIGHTS(nights=span, wanted=wanted.nights), REQUESTED(words=wanted.words, nights=wanted.nights))
