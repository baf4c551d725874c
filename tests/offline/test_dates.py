"""Dates as people write them (agent_core/offline/dates.py), resolved against "today": Monday
2026-11-30. Each phrasing gives its start, its end when it names one, the length its words
imply, and a weekday that disagrees with its date."""

from __future__ import annotations

from datetime import date

import pytest

from agent_core.offline.dates import read_when
from agent_core.offline.wishes import read_wishes

TODAY = date(2026, 11, 30)  # a Monday
D = date.fromisoformat

# (text, start, end)
PHRASINGS: list[tuple[str, str | None, str | None]] = [
    # ranges
    ("12–14 March", "2027-03-12", "2027-03-14"),
    ("12-14 March", "2027-03-12", "2027-03-14"),
    ("12-14 March 2027", "2027-03-12", "2027-03-14"),
    ("12 to 14 March", "2027-03-12", "2027-03-14"),
    ("March 12-14", "2027-03-12", "2027-03-14"),
    ("March 12 to March 14", "2027-03-12", "2027-03-14"),
    ("Mar 12 – Mar 14, 2027", "2027-03-12", "2027-03-14"),
    ("12-14/3", "2027-03-12", "2027-03-14"),
    ("12/3 - 14/3", "2027-03-12", "2027-03-14"),
    ("15/01/2027 - 17/01/2027", "2027-01-15", "2027-01-17"),
    ("15.01.2027 to 17.01.2027", "2027-01-15", "2027-01-17"),
    ("2027-01-15 to 2027-01-17", "2027-01-15", "2027-01-17"),
    ("2027-03-12 to 14", "2027-03-12", "2027-03-14"),
    ("20th to 23rd of January", "2027-01-20", "2027-01-23"),
    ("the 20th to the 23rd of January", "2027-01-20", "2027-01-23"),
    ("from the 12th to the 14th", "2026-12-12", "2026-12-14"),
    ("from the 2nd to the 4th", "2026-12-02", "2026-12-04"),
    ("Dec 5-8", "2026-12-05", "2026-12-08"),
    ("Dec 5 to Dec 9", "2026-12-05", "2026-12-09"),
    ("Dec 30 - Jan 2", "2026-12-30", "2027-01-02"),
    ("3月12日至14日", "2027-03-12", "2027-03-14"),
    ("3月12日-14日", "2027-03-12", "2027-03-14"),
    ("3月12日到3月14日", "2027-03-12", "2027-03-14"),
    ("三月十二日至十四日", "2027-03-12", "2027-03-14"),
    ("12月5日到8日", "2026-12-05", "2026-12-08"),
    ("12号到14号", "2026-12-12", "2026-12-14"),
    ("2027年1月15日至2027年1月17日", "2027-01-15", "2027-01-17"),
    ("周五到周日", "2026-12-04", "2026-12-06"),
    ("Friday to Sunday", "2026-12-04", "2026-12-06"),
    ("下周五到下周日", "2026-12-11", "2026-12-13"),
    # one day
    ("2026-12-05", "2026-12-05", None),
    ("2026/12/05", "2026-12-05", None),
    ("2026年12月5日", "2026-12-05", None),
    ("05/12/2026", "2026-12-05", None),
    ("3月5日", "2027-03-05", None),
    ("十二月五日", "2026-12-05", None),
    ("12月5号", "2026-12-05", None),
    ("12号", "2026-12-12", None),
    ("下个月5号", "2026-12-05", None),
    ("Dec 5", "2026-12-05", None),
    ("December 5th, 2027", "2027-12-05", None),
    ("5th of December", "2026-12-05", None),
    ("on the 12th", "2026-12-12", None),
    ("14/3", "2027-03-14", None),
    # weekdays with and without a date (the date wins)
    ("Saturday 2027-01-16", "2027-01-16", None),
    ("Sat 16 January 2027", "2027-01-16", None),
    ("2027-01-16 (Saturday)", "2027-01-16", None),
    ("2027-01-16（周六）", "2027-01-16", None),
    ("周六（1月16日）", "2027-01-16", None),
    ("Friday 2027-01-16", "2027-01-16", None),  # a clash, asked about (below)
    ("下周五", "2026-12-11", None),
    ("下个星期五", "2026-12-11", None),
    ("本周五", "2026-12-04", None),
    ("周六", "2026-12-05", None),
    ("礼拜天", "2026-12-06", None),
    ("下下周一", "2026-12-14", None),
    ("next Friday", "2026-12-11", None),
    ("this Saturday", "2026-12-05", None),
    ("on Sunday", "2026-12-06", None),
    # relative days
    ("今天", "2026-11-30", None),
    ("明天", "2026-12-01", None),
    ("后天", "2026-12-02", None),
    ("大后天", "2026-12-03", None),
    ("3天后", "2026-12-03", None),
    ("两周后", "2026-12-14", None),
    ("tomorrow", "2026-12-01", None),
    ("the day after tomorrow", "2026-12-02", None),
    ("in 3 days", "2026-12-03", None),
    ("in two weeks", "2026-12-14", None),
    ("3 days from now", "2026-12-03", None),
    # weekends and holidays
    ("this weekend", "2026-12-05", None),
    ("next weekend", "2026-12-12", None),
    ("下周末", "2026-12-12", None),
    ("周末", "2026-12-05", None),
    ("a long weekend", "2026-12-04", None),
    ("next long weekend", "2026-12-11", None),
    ("国庆", "2027-10-01", None),
    ("国庆节去杭州", "2027-10-01", None),
    ("五一", "2027-05-01", None),
    ("over May Day", "2027-05-01", None),
    ("元旦", "2027-01-01", None),
    ("Christmas", "2026-12-25", None),
    ("春节", "2027-02-06", None),
    ("2027年国庆", "2027-10-01", None),
    # not dates
    ("坐地铁5号线", None, None),
    ("3-4 days", None, None),
    ("08:00-10:00", None, None),
    ("budget 3000-4000", None, None),
    ("天津一日游", None, None),
    ("五一广场附近", None, None),
    ("3号航站楼", None, None),
]


@pytest.mark.parametrize(("text", "start", "end"), PHRASINGS, ids=[p[0] for p in PHRASINGS])
def test_a_phrasing_gives_its_start_and_end(text: str, start: str | None, end: str | None) -> None:
    when = read_when(text, TODAY)
    assert (when.start, when.end) == (D(start) if start else None, D(end) if end else None)


def test_there_are_sixty_phrasings() -> None:
    assert len([p for p in PHRASINGS if p[1]]) >= 60


@pytest.mark.parametrize(("text", "said", "day"), [
    ("Friday 2027-01-16", 4, "2027-01-16"),
    ("2027-01-16 (Thursday)", 3, "2027-01-16"),
    ("周五（2027年1月16日）", 4, "2027-01-16"),
])
def test_a_weekday_that_is_not_the_dates_is_reported(text: str, said: int, day: str) -> None:
    when = read_when(text, TODAY)
    assert when.start == D(day) and when.clash is not None and (when.clash.said, when.clash.day) == (said, D(day))


@pytest.mark.parametrize("text", ["Saturday 2027-01-16", "2027-01-16（周六）", "周六（1月16日）"])
def test_a_weekday_that_is_the_dates_is_no_clash(text: str) -> None:
    assert read_when(text, TODAY).clash is None


@pytest.mark.parametrize(("text", "start", "nights"), [
    ("Saturday 2027-01-16, two days", "2027-01-16", 1),
    ("a long weekend in Shanghai, leaving Friday 2027-01-15", "2027-01-15", 2),
    ("a long weekend in Shanghai", "2026-12-04", 2),
    ("下周末去杭州", "2026-12-12", 1),
    ("12–14 March", "2027-03-12", 2),
    ("20th to 23rd of January", "2027-01-20", 3),
    ("next weekend, 3 days", "2026-12-12", 2),
    ("国庆去杭州玩三天", "2027-10-01", 2),
])
def test_the_trip_a_message_asks_for(text: str, start: str, nights: int) -> None:
    r = read_wishes(text, TODAY)
    assert (r.start, r.trip_nights) == (D(start), nights)


def test_a_month_alone_is_a_month() -> None:
    assert read_when("plan Xi'an for 3 people in May", TODAY).month == D("2027-05-01")
    assert read_when("5月去西安", TODAY).month == D("2027-05-01")
    assert read_when("in May", TODAY).start is None


def test_written_dates_are_marked_written() -> None:
    assert read_when("12–14 March", TODAY).written and read_when("2027-01-16", TODAY).written
    assert not read_when("下周五", TODAY).written and not read_when("tomorrow", TODAY).written


# the lunar calendar, as travellers write it around the Spring Festival (2027's falls on 2027-02-06;
# its 腊月 has 29 days, so 除夕 is 腊月二十九, 2027-02-05)
@pytest.mark.parametrize(("text", "start", "end"), [
    ("腊月二十八走，初六回", "2027-02-04", "2027-02-11"),
    ("腊月廿八到正月初六", "2027-02-04", "2027-02-11"),
    ("除夕到初三", "2027-02-05", "2027-02-08"),
    ("大年初一出发", "2027-02-06", None),
    ("大年初三", "2027-02-08", None),
    ("腊月三十出发", "2027-02-05", None),  # a 30th 腊月 lacks: its last day
    ("正月十五出发", "2027-02-20", None),
])
def test_a_lunar_date(text: str, start: str, end: str | None) -> None:
    r = read_wishes(text, TODAY)
    assert (r.start or r.end) is not None
    assert ((r.start or r.end).isoformat(), r.end.isoformat() if r.start and r.end else None) == (start, end)
    assert r.start_written or r.end_written


@pytest.mark.parametrize("text", ["初中同学聚会", "月初三天去杭州"])
def test_words_like_lunar_dates_are_not(text: str) -> None:
    assert read_wishes(text, TODAY).start is None


def test_a_lunar_date_to_come_back_on_is_the_way_back() -> None:
    r = read_wishes("正月十五回来", TODAY)
    assert (r.start, r.end) == (None, date(2027, 2, 20))


@pytest.mark.parametrize(("text", "today", "start"), [
    ("春节去三亚", date(2026, 12, 6), date(2027, 2, 6)),
    ("2031年春节去三亚", date(2026, 12, 6), date(2031, 1, 23)),  # past the table the festivals had
    ("端午去杭州", date(2027, 6, 10), date(2028, 5, 28)),  # this year's is over: next year's
    ("中秋回家", date(2026, 12, 6), date(2027, 9, 15)),  # going home for it: the way there
])
def test_a_lunar_festival_in_any_year(text: str, today: date, start: date) -> None:
    r = read_wishes(text, today)
    assert r.start == start
