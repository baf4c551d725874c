"""The offline planner's readers: dates, numbers, wishes and place names in Chinese and English."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest

from agent_core.offline.compose import data_source, opening
from agent_core.offline.dates import find_dates
from agent_core.offline.numbers import cn_to_int
from agent_core.offline.options import Sight, read_hotels, read_sights, read_trains, worth_a_visit
from agent_core.offline.places import PlaceReader
from agent_core.offline.request import TripRequest
from agent_core.offline.wishes import read_wishes
from agent_core.prompts import build_system_prompt, read_run_clock
from tools.travel.geo import Gazetteer

TODAY = date(2026, 11, 30)  # a Monday


@pytest.fixture(scope="module")
def reader() -> PlaceReader:
    return PlaceReader(Gazetteer.load())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("今天", "2026-11-30"), ("明天", "2026-12-01"), ("后天", "2026-12-02"), ("大后天", "2026-12-03"),
        ("下周五", "2026-12-11"), ("下个星期五", "2026-12-11"), ("周六", "2026-12-05"), ("礼拜天", "2026-12-06"),
        ("本周五", "2026-12-04"), ("下下周一", "2026-12-14"), ("3月5日", "2027-03-05"), ("12月5号", "2026-12-05"),
        ("十二月五日", "2026-12-05"), ("2026-12-05", "2026-12-05"), ("2026年12月5日", "2026-12-05"),
        ("3天后", "2026-12-03"), ("tomorrow", "2026-12-01"), ("next Friday", "2026-12-11"),
        ("on Saturday", "2026-12-05"), ("Dec 5", "2026-12-05"), ("5th of December", "2026-12-05"),
        ("March 3rd, 2027", "2027-03-03"), ("in 3 days", "2026-12-03"), ("this weekend", "2026-12-05"),
        ("2025-01-01", "2025-01-01"), ("yesterday", "2026-11-29"),
    ],
)
def test_dates_resolve_against_today(text: str, expected: str) -> None:
    found = find_dates(f"我想{text}出发" if not text.isascii() else f"leave {text} please", TODAY)
    assert [d.day.isoformat() for d in found] == [expected]


def test_date_ranges_and_bare_end_days() -> None:
    assert [d.day.isoformat() for d in find_dates("12月5日到8日", TODAY)] == ["2026-12-05", "2026-12-08"]
    assert [d.day.isoformat() for d in find_dates("Dec 5 to Dec 9", TODAY)] == ["2026-12-05", "2026-12-09"]
    assert find_dates("坐地铁5号线", TODAY) == []


@pytest.mark.parametrize(("text", "value"), [("十二", 12), ("两千五", 2500), ("一万二", 12000), ("一百零五", 105), ("三千", 3000)])
def test_chinese_numerals(text: str, value: int) -> None:
    assert cn_to_int(text) == value


def test_wishes_in_chinese() -> None:
    r = read_wishes("明天去杭州，三天两晚，我们两个人，预算三千，坐高铁，酒店要含早餐，五星", TODAY)
    assert (r.start, r.days, r.nights, r.travellers, r.budget) == (date(2026, 12, 1), 3, 2, 2, 3000)
    assert (r.transport, r.breakfast, r.stars, r.lang) == ("train", True, 5, "zh")
    assert read_wishes("玩两天", TODAY).trip_nights == 1
    assert read_wishes("不要坐飞机", TODAY).transport == "train"
    assert read_wishes("改坐飞机", TODAY).transport == "flight"
    assert read_wishes("人均2000以内，3个人", TODAY).budget == 6000
    assert read_wishes("便宜一点", TODAY).cheaper == 1
    assert read_wishes("住在外滩附近", TODAY).landmark == "外滩"


def test_wishes_in_english() -> None:
    r = read_wishes("next Friday for 3 days, budget 5k, 2 people, by train, hotel near the Bund, breakfast", TODAY)
    assert (r.start, r.days, r.budget, r.travellers, r.transport) == (date(2026, 12, 11), 3, 5000, 2, "train")
    assert (r.landmark, r.breakfast, r.lang) == ("Bund", True, "en")
    assert read_wishes("a day trip tomorrow", TODAY).trip_nights == 0
    assert read_wishes("4 nights, I don't want to fly", TODAY).transport == "train"
    assert read_wishes("make it cheaper", TODAY).cheaper == 1
    # a length followed by its start date, and a start date counted from today
    assert (read_wishes("4 days from 2027-03-05", TODAY).days, read_wishes("4 days from 2027-03-05", TODAY).start) == (4, date(2027, 3, 5))
    r = read_wishes("3 days from now", TODAY)
    assert (r.days, r.start) == (None, date(2026, 12, 3))


@pytest.mark.parametrize(("text", "budget"), [
    ("预算一共8000够吗", 8000),  # not the 一 of 一共 ("in total")
    ("预算一共八千", 8000),
    ("预算大概两万块", 20000),
    ("预算总共5000左右", 5000),
    ("预算八千", 8000),
    ("预算3k", 3000),
])
def test_a_budget_is_the_sum_not_a_word_before_it(text: str, budget: float) -> None:
    assert read_wishes(text, TODAY).budget == budget


@pytest.mark.parametrize(("text", "travellers", "days"), [
    ("next month for 4 or 5 days", None, 5),  # a length, not four people
    ("Xi'an for 2-3 days", None, 3),
    ("Xi'an for 3 to 4 days", None, 4),
    ("Beijing to Xi'an for 2", 2, None),
    ("for 3 people, 4 days", 3, 4),
])
def test_a_length_with_a_range_is_not_a_party(text: str, travellers: int | None, days: int | None) -> None:
    r = read_wishes(text, TODAY)
    assert (r.travellers, r.days) == (travellers, days)


@pytest.mark.parametrize(("text", "month"), [
    ("下个月去成都", date(2026, 12, 1)),
    ("下月中旬去成都", date(2026, 12, 1)),
    ("next month to Chengdu", date(2026, 12, 1)),
    ("这个月去成都", date(2026, 11, 1)),
    ("this month", date(2026, 11, 1)),
    ("下下个月", date(2027, 1, 1)),
    ("the month after next", date(2027, 1, 1)),
    ("1月去成都", date(2027, 1, 1)),
])
def test_a_month_said_relative_to_today_is_that_month(text: str, month: date) -> None:
    r = read_wishes(text, TODAY)
    assert (r.month, r.start) == (month, None)


def test_a_day_of_next_month_is_a_day_not_a_month() -> None:
    r = read_wishes("下个月5号去成都", TODAY)
    assert (r.start, r.month) == (date(2026, 12, 5), None)


@pytest.mark.parametrize(("text", "travellers"), [
    ("一家三口去三亚", 3),
    ("两个大人一个小孩", 3),
    ("2大1小", 3),
    ("我们4个人，2大2小", 4),
    ("2 adults and 2 kids", 4),
    ("two adults, one child", 3),
    ("me and 3 friends", 4),
    ("I and 2 colleagues", 3),
    ("我和两个同事", 3),
    ("我带两个孩子", 3),
    ("family of five", 5),
    ("thinking about taking my parents to Guilin", 3),
    ("下下周六带老婆孩子去厦门", 3),
    ("with my wife and kids to Sanya", 3),
    ("带老婆去厦门", 2),
    ("陪我妈去杭州", 2),
    ("带孩子去哈尔滨", 2),
    ("3个大人", 3),
    ("坐2小时的车", None),  # hours, not children
    ("me and 3 days", None),
])
def test_a_party_counted_in_parts_is_everyone(text: str, travellers: int | None) -> None:
    assert read_wishes(text, TODAY).travellers == travellers


@pytest.mark.parametrize(("text", "budget"), [
    ("人均2000", 2000),
    ("人均2000，3个人", 6000),
    ("每人预算三千，两个人", 6000),
    ("两个大人一个小孩，人均1500", 4500),
])
def test_a_budget_per_person_counts_the_party(text: str, budget: float) -> None:
    assert read_wishes(text, TODAY).budget == budget


@pytest.mark.parametrize(("text", "after", "before"), [
    ("早上8点以后出发", "08:00", "12:00"),
    ("下午3点后出发", "15:00", "18:00"),
    ("晚上7点半以后", "19:30", None),
    ("10点前出发", None, "10:00"),
    ("after 9am", "09:00", None),
    ("after 9:30", "09:30", None),
    ("not before 10am", "10:00", None),
    ("before 2pm", None, "14:00"),
    ("after 3 days", None, None),  # no time of day
    ("by 5pm", None, None),  # as often when to arrive
])
def test_a_departure_time_said_outright(text: str, after: str | None, before: str | None) -> None:
    r = read_wishes(text, TODAY)
    assert (r.depart_after, r.depart_before) == (after, before)


@pytest.mark.parametrize(("text", "start", "end", "leave", "back"), [
    ("can we come back Sunday evening instead?", None, date(2026, 12, 6), None, ("17:00", "23:59")),
    ("周六早上出发周日晚上回", date(2026, 12, 5), date(2026, 12, 6), ("06:00", "12:00"), ("17:00", "23:59")),
    ("leave Friday morning and come back Sunday evening", date(2026, 12, 4), date(2026, 12, 6),
     ("06:00", "12:00"), ("17:00", "23:59")),
    ("回来改成周日晚上", None, date(2026, 12, 6), None, ("17:00", "23:59")),
    ("我想周日下午回", None, date(2026, 12, 6), None, ("12:00", "18:00")),
    ("返程坐晚上的车", None, None, None, ("17:00", "23:59")),
    ("return after 6pm", None, None, None, ("18:00", None)),
    ("leaving Saturday morning", date(2026, 12, 5), None, ("06:00", "12:00"), None),
    ("下周五出发，周日回", date(2026, 12, 11), date(2026, 12, 13), None, None),
])
def test_the_way_back_is_the_end_and_its_own_time(text: str, start: date | None, end: date | None,
                                                  leave: tuple[str, str | None] | None,
                                                  back: tuple[str, str | None] | None) -> None:
    r = read_wishes(text, TODAY)
    assert (r.start, r.end) == (start, end)
    assert (r.depart_after, r.depart_before) == (leave or (None, None))
    assert (r.return_after, r.return_before) == (back or (None, None))


def test_a_weekday_to_come_back_on_is_the_one_after_the_start() -> None:
    trip = TripRequest().merged(read_wishes("2026-12-12出发去杭州玩两天", TODAY))
    later = trip.merged(read_wishes("return on Monday morning", TODAY))  # today's next Monday is 12-07
    assert (later.start, later.end, later.trip_nights, later.return_after) == (date(2026, 12, 12), date(2026, 12, 14), 2, "06:00")
    written = trip.merged(read_wishes("come back on 2026-12-10", TODAY))  # a written date is kept (and refused later)
    assert written.end == date(2026, 12, 10)


@pytest.mark.parametrize(("text", "arrive", "leave"), [
    ("to Shenzhen on Monday for a meeting at 2pm", "13:00", (None, None)),  # an hour to get there
    ("need to be there by 11am", "11:00", (None, None)),
    ("arrive by 5pm", "17:00", (None, None)),
    ("interview at 10:30am", "09:30", (None, None)),
    ("下午两点前到深圳", "14:00", (None, None)),  # the afternoon is the arrival's, not when to leave
    ("明天下午两点开会", "13:00", (None, None)),
    ("明天9点半有个会", "08:30", (None, None)),
    ("早上出发，下午两点前到", "14:00", ("06:00", "12:00")),
    ("周五下班后出发", None, ("18:00", "23:59")),
    ("we'll take the 10am train instead", None, ("09:30", "10:30")),  # one ride named by its time
    ("坐10点那班车", None, ("09:30", "10:30")),
    ("下午3点的航班", None, ("14:30", "15:30")),
    ("leave after work on Friday", None, ("18:00", "23:59")),
    ("be in Guangzhou by noon", "12:00", (None, None)),
    ("by 5pm", None, (None, None)),
])
def test_by_when_to_arrive(text: str, arrive: str | None, leave: tuple[str | None, str | None]) -> None:
    r = read_wishes(text, TODAY)
    assert r.arrive_before == arrive
    assert (r.depart_after, r.depart_before) == leave


@pytest.mark.parametrize("text", ["the kids are under 6", "less than 3 hours on the train", "max 2 transfers"])
def test_a_small_number_after_under_is_no_budget(text: str) -> None:
    assert read_wishes(text, TODAY).budget is None


def test_a_day_of_the_trip_is_not_its_length() -> None:
    assert read_wishes("第二天想去迪士尼", TODAY).trip_nights is None
    assert read_wishes("玩两天", TODAY).trip_nights == 1


def test_later_messages_override_and_count_cheaper() -> None:
    first = read_wishes("12月5日到8日", TODAY)
    assert first.trip_nights == 3
    moved = TripRequest().merged(first).merged(read_wishes("改到下周六", TODAY))
    assert (moved.start, moved.trip_nights) == (date(2026, 12, 12), 3)
    cheaper = moved.merged(read_wishes("便宜一点", TODAY)).merged(read_wishes("再便宜点", TODAY))
    assert cheaper.cheaper == 2


@pytest.mark.parametrize(
    ("text", "origin", "destination"),
    [
        ("下周五从北京去上海玩两天", "北京", "上海"),
        ("北京到上海", "北京", "上海"),
        ("去上海，从北京出发", "北京", "上海"),
        ("我在北京，想去成都玩", "北京", "成都"),
        ("Beijing to Shanghai next Friday", "北京", "上海"),
        ("Trip to Xi'an from Beijing", "北京", "西安"),
        ("from Shanghai to Tokyo", "上海", "东京"),
        ("上海两日游", None, "上海"),
        ("Chengdu 3 days", None, "成都"),
    ],
)
def test_place_roles(reader: PlaceReader, text: str, origin: str | None, destination: str) -> None:
    roles = {m.role: m.city.name_zh for m in reader.mentions(text) if m.city is not None}
    assert roles.get("origin") == origin
    assert roles.get("destination") == destination


def test_unknown_and_ambiguous_places(reader: PlaceReader) -> None:
    assert [m.text for m in reader.mentions("去霍格沃茨玩三天")] == ["霍格沃茨"]
    assert reader.resolve("霍格沃茨").city is None
    typo = reader.resolve("Shangai")
    assert typo.city is None and "上海 (Shanghai)" in typo.options
    wanda = reader.resolve("万达广场")
    assert wanda.ambiguous and len(wanda.options) == 4
    bund = reader.resolve("外滩")
    assert bund.city is not None and bund.city.name_zh == "上海" and bund.poi is not None
    # 北京路 is a street in Guangzhou, not the city
    assert all(m.city is None for m in reader.mentions("去北京路步行街"))


def test_prompt_carries_a_machine_readable_clock() -> None:
    prompt = build_system_prompt("en", datetime(2026, 11, 30, 9, 5), "Asia/Shanghai", "Shanghai, Xuhui")
    assert "<answer>" in prompt and "ask_human" in prompt and "submit_plan" in prompt
    clock = read_run_clock([prompt])
    assert clock is not None
    assert (clock.today, clock.timezone, clock.time, clock.lang, clock.location_text) == (
        date(2026, 11, 30), "Asia/Shanghai", "09:05", "en", "Shanghai, Xuhui")
    zh = build_system_prompt("zh", datetime(2026, 12, 1, 20, 0), "Asia/Shanghai", None)
    assert "2026年12月01日" in zh and "星期二" in zh and "current_location" in zh
    assert read_run_clock([zh]).location_text is None  # type: ignore[union-attr]


# -- the tools' JSON, read as the planner chooses by ---------------------------------------------
def test_readers_keep_the_tools_ids_and_skip_what_cannot_be_had() -> None:
    seat = {"seat": "二等座", "price": 606.0, "left": 3}
    train = {"number": "G30", "type": "高铁", "from_station": "北京南", "to_station": "上海虹桥", "from_city": "北京",
             "to_city": "上海", "depart": "2026-12-11 08:15", "arrive": "2026-12-11 13:41", "duration_min": 326,
             "distance_km": 1318, "stops": ["济南西"], "seats": [seat, {"seat": "一等座", "price": 974.5, "left": 0}]}
    sold_out = {**train, "number": "G2", "seats": [{**seat, "left": 0}]}
    data = {"source": "sandbox", "results": [train, sold_out, {"number": "broken"}]}
    rides = read_trains(data)
    assert [(r.number, r.origin, r.depart, r.seats) for r in rides] == [("G30", "北京南", "2026-12-11 08:15", (("二等座", 606.0),))]
    hotel = {"hotel_id": "H-sh-001", "name": "全季酒店(外滩店)", "brand": "全季", "city": "上海", "level_name": "舒适型",
             "stars": 3, "address": "", "lat": 31.2, "lon": 121.4, "price": 400.0, "nights": 1, "total": 400.0,
             "has_breakfast": True, "rating": 4.6, "rooms_left": 0}
    assert read_hotels({"results": [hotel]}) == []  # no rooms left
    assert [h.hotel_id for h in read_hotels({"results": [{**hotel, "rooms_left": 2}]})] == ["H-sh-001"]
    places = read_sights({"results": [
        {"poi_id": "POI-shanghai-01", "name": "外滩", "city": "上海", "category": "地标", "lat": 31.24, "lon": 121.49},
        {"poi_id": "STA-上海虹桥", "name": "上海虹桥站", "city": "上海", "category": "火车站", "lat": 31.19, "lon": 121.32},
    ]})
    assert [s.poi_id for s in worth_a_visit(places)] == ["POI-shanghai-01"]
    assert data_source(frozenset({"sandbox"})) == "sandbox" and data_source(frozenset({"sandbox", "amap"})) == "mixed"
    monday, friday = date(2026, 11, 30), date(2026, 12, 4)
    museum = Sight("P", "博物馆", hours="09:00-17:00 周一闭馆")
    assert opening(museum, monday) is None and opening(museum, friday) is not None
    late = opening(Sight("Q", "公园", hours="06:00-01:00"), friday)
    assert late is not None and late[1] - late[0] == timedelta(hours=19)
    assert opening(Sight("R", "古镇", hours="周六日 09:00-17:00"), friday) is None


@pytest.mark.parametrize(
    ("text", "days", "nights"),
    [
        ("Plan a 3-day trip from Beijing to Shanghai", 3, 2),
        ("3 day trip from Beijing to Shanghai", 3, 2),
        ("three days in Shanghai", 3, 2),
        ("a long weekend in Shanghai", 3, 2),
        ("北京到上海3天", 3, 2),
        ("北京到上海三天两晚", 3, 2),
        ("a day trip to Tianjin", 1, 0),
        ("天津一日游", 1, 0),
        ("周末去杭州", 2, 1),
        ("Shanghai for 4 nights", None, 4),
    ],
)
def test_lengths_people_write(text: str, days: int | None, nights: int) -> None:
    r = read_wishes(text, TODAY)
    assert r.trip_nights == nights, (text, r.days, r.nights)
    if days is not None:
        assert r.days == days


@pytest.mark.parametrize(("text", "start", "end", "home"), [
    ("腊月二十八回家过年", date(2027, 2, 4), None, True),  # going home is the way there
    ("下周五回家看爸妈", date(2026, 12, 11), None, True),
    ("周日晚上回家", None, date(2026, 12, 6), None),  # coming home is the way back
])
def test_going_home_is_the_way_there_and_a_bed_at_home(text: str, start: date | None, end: date | None,
                                                      home: bool | None) -> None:
    r = read_wishes(text, TODAY)
    assert (r.start, r.end, r.home_stay) == (start, end, home)
