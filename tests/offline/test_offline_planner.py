"""The offline planner on Chinese and English requests, driven turn by turn with the real tools.

Each conversation: ask the planner for a turn, run its tool calls with the real sandbox tools,
append the results, repeat. ask_human calls are answered from the test's script (or end the
drive when the script has no answer left: the question is the outcome). Plans are checked
against the tool outputs they were built from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from agent_core.offline import OfflinePlanner
from agent_core.plan_words import arrival
from agent_core.prompts import build_system_prompt
from agent_core.schema import Message, Role
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import TripPlan
from tools.signals import HumanInputRequired
from tools.travel import Gazetteer

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))  # a Monday


@dataclass
class Drive:
    messages: list[Message]
    questions: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    plan: TripPlan | None = None
    final_text: str | None = None  # submit_plan's text, or the answer of a turn without calls
    pending: str | None = None  # a question left unanswered

    def outputs(self, tool: str) -> str:
        ids = {tc.id for m in self.messages if m.role is Role.ASSISTANT for tc in m.tool_calls or [] if tc.function.name == tool}
        return "\n".join(m.content or "" for m in self.messages if m.role is Role.TOOL and m.tool_call_id in ids)

    def records(self, *tools: str) -> list[dict[str, Any]]:
        """Every result record the tools returned (their JSON "results")."""
        out: list[dict[str, Any]] = []
        for tool in tools:
            for line in self.outputs_each(tool):
                data = json.loads(line) if line.startswith("{") else {}
                out += data.get("results", [])
        return out

    def outputs_each(self, tool: str) -> list[str]:
        ids = {tc.id for m in self.messages if m.role is Role.ASSISTANT for tc in m.tool_calls or [] if tc.function.name == tool}
        return [m.content or "" for m in self.messages if m.role is Role.TOOL and m.tool_call_id in ids]

    def calls(self, tool: str) -> list[dict[str, Any]]:
        return [json.loads(tc.function.arguments) for m in self.messages if m.role is Role.ASSISTANT
                for tc in m.tool_calls or [] if tc.function.name == tool]


async def drive(planner: OfflinePlanner, tools: ToolCollection, text: str | None, answers: list[str] | None = None,
                lang: str = "zh", messages: list[Message] | None = None) -> Drive:
    """`text` None: no new words from the person (the planner goes on, e.g. after a review note)."""
    answers = list(answers or [])
    if messages is None:
        messages = [Message.system(build_system_prompt(lang, NOW, "Asia/Shanghai", None))]
    if text is not None:
        messages.append(Message.user(text))
    d = Drive(messages)
    for _ in range(15):
        reply = await planner.ask_tool(messages, tools=tools.to_params())
        assert reply.role is Role.ASSISTANT
        messages.append(reply)
        if not reply.tool_calls:
            d.final_text = reply.content
            return d
        for call in reply.tool_calls:
            ctx = ToolContext(tool_call_id=call.id, now=NOW, lang=lang, home_city="北京")
            try:
                result = await tools.execute(call.function.name, call.function.arguments, ctx)
            except HumanInputRequired as ask:
                assert ask.tool_call_id == call.id
                d.questions.append((ask.question, ask.options))
                if not answers:
                    d.pending = ask.question
                    return d
                messages.append(Message.tool(answers.pop(0), tool_call_id=call.id, name="ask_human"))
                continue
            messages.append(Message.tool(result.observation(), tool_call_id=call.id, name=call.function.name))
            if result.ends_run and result.ok:
                d.plan, d.final_text = result.plan, result.final_text
                return d
    raise AssertionError("the planner did not finish within 15 turns")


def assert_sound_plan(d: Drive, *, origin: str, destination: str, start: str, nights: int) -> TripPlan:
    assert d.plan is not None, d.final_text or d.pending
    p = d.plan
    assert (p.origin_city, p.destination_city, p.start_date) == (origin, destination, start)
    assert len(p.stays) == (1 if nights else 0)
    assert p.total_cost == pytest.approx(p.computed_total())
    assert any("沙盒" in n or "sandbox" in n for n in p.notes)
    rides = {r["number"]: r for r in d.records("train_search", "flight_search")}
    for leg in p.legs:
        assert leg.number is not None and leg.number in rides, f"{leg.number} was not returned by a tool"
        r = rides[leg.number]
        assert (leg.depart, leg.arrive) == (r["depart"], r["arrive"])
        assert (leg.origin, leg.destination) in ((r.get("from_station"), r.get("to_station")), (r.get("from_airport"), r.get("to_airport")))
    hotels = {h["hotel_id"]: h for h in d.records("hotel_search")}
    for stay in p.stays:
        assert stay.hotel_id in hotels and stay.name == hotels[stay.hotel_id]["name"]
        assert stay.nights == nights
    places = {x["poi_id"]: x for x in d.records("poi_search")}
    for visit in p.visits:
        assert visit.poi_id in places and visit.name == places[visit.poi_id]["name"]
        assert_open(places[visit.poi_id]["opening_hours"], visit.date, visit.start or "", visit.duration_min or 0)
    assert p.visits, "a trip without a single sight"
    assert d.final_text and (p.legs[0].number or "?") in d.final_text
    return p


def assert_open(hours: str, day: str, start: str, minutes: int) -> None:
    """The visit lies inside the opening hours the tool gave, on a day the place is open."""
    weekday = "一二三四五六日"[date.fromisoformat(day).weekday()]
    assert not re.search(f"周{weekday}(?:闭|休)", hours), f"closed on 周{weekday}: {hours}"
    only = re.match(r"周([一二三四五六日]+)\s", hours)
    assert not only or weekday in only.group(1), f"open only {only.group(0) if only else ''}"
    m = re.search(r"(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})", hours)
    if m is None:
        return  # 全天 and the like
    opens, closes = int(m[1]) * 60 + int(m[2]), int(m[3]) * 60 + int(m[4])
    closes += 24 * 60 if closes <= opens else 0
    begin = int(start[:2]) * 60 + int(start[3:5])
    assert opens <= begin and begin + minutes <= closes, f"{start} +{minutes} min outside {hours}"


# -- complete requests produce plans ---------------------------------------------------------------
COMPLETE = [
    ("下周五从北京去上海玩两天", "zh", "北京", "上海", "2026-12-11", 1, "train"),
    ("明天从上海去杭州，三天两晚，预算3000，坐高铁，酒店要含早餐", "zh", "上海", "杭州", "2026-12-01", 2, "train"),
    ("下周六北京飞成都玩4天", "zh", "北京", "成都", "2026-12-12", 3, "flight"),
    ("从北京去西安，下周五出发，玩三天，两个人", "zh", "北京", "西安", "2026-12-11", 2, None),
    ("2026-12-20从南京去武汉，住2晚", "zh", "南京", "武汉", "2026-12-20", 2, None),
    ("后天从上海去北京玩两天，不要坐飞机", "zh", "上海", "北京", "2026-12-02", 1, "train"),
    ("下周三从成都去重庆玩两天", "zh", "成都", "重庆", "2026-12-09", 1, None),
    ("我和老婆周六从北京去三亚玩3天，预算一万", "zh", "北京", "三亚", "2026-12-05", 2, None),
    ("12月10日从北京去东京，玩5天", "zh", "北京", "东京", "2026-12-10", 4, "flight"),
    ("3月5日从广州去长沙，住两晚", "zh", "广州", "长沙", "2027-03-05", 2, None),
    ("Plan a trip from Beijing to Shanghai next Friday for 2 days", "en", "Beijing", "Shanghai", "2026-12-11", 1, "train"),
    ("Tomorrow from Shanghai to Hangzhou, 3 days, by train, budget 3000", "en", "Shanghai", "Hangzhou", "2026-12-01", 2, "train"),
    ("Fly from Guangzhou to Chengdu on Dec 12, 4 nights, hotel with breakfast", "en", "Guangzhou", "Chengdu", "2026-12-12", 4, "flight"),
    ("From Shanghai to Tokyo next Saturday for 5 days", "en", "Shanghai", "Tokyo", "2026-12-12", 4, "flight"),
    ("2 people from Beijing to Xi'an next Friday for 3 days, under 4000 yuan", "en", "Beijing", "Xi'an", "2026-12-11", 2, None),
]


@pytest.mark.parametrize(("text", "lang", "origin", "destination", "start", "nights", "kind"), COMPLETE)
async def test_complete_request_gives_a_plan(planner: OfflinePlanner, tools: ToolCollection, text: str, lang: str,
                                             origin: str, destination: str, start: str, nights: int, kind: str | None) -> None:
    d = await drive(planner, tools, text, lang=lang)
    assert d.questions == []
    plan = assert_sound_plan(d, origin=origin, destination=destination, start=start, nights=nights)
    if kind:
        assert {leg.kind for leg in plan.legs} == {kind}
    assert len(plan.legs) == 2


@pytest.mark.parametrize(("text", "lang", "origin", "first", "second"), [
    ("从北京出发，先去上海玩2天，再去杭州玩2天，2027年3月5日出发", "zh", "北京", "上海", "杭州"),
    ("From Beijing to Shanghai then to Hangzhou, 4 days from 2027-03-05", "en", "Beijing", "Shanghai", "Hangzhou"),
])
async def test_a_second_destination_is_named_not_silently_dropped(
    planner: OfflinePlanner, tools: ToolCollection, text: str, lang: str, origin: str, first: str, second: str
) -> None:
    d = await drive(planner, tools, text, lang=lang)
    assert d.plan is not None and (d.plan.origin_city, d.plan.destination_city) == (origin, first)
    note = next(n for n in d.plan.notes if second in n)
    assert ("一个目的地" in note) if lang == "zh" else ("one destination at a time" in note)
    assert d.final_text is not None and second in d.final_text  # the person reads it in the reply


async def test_one_destination_gets_no_such_note(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "明天从上海去杭州，三天两晚")
    assert d.plan is not None and not any("一个目的地" in n for n in d.plan.notes)


async def test_day_trip_has_no_hotel(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "Day trip from Beijing to Tianjin tomorrow", lang="en")
    plan = assert_sound_plan(d, origin="Beijing", destination="Tianjin", start="2026-12-01", nights=0)
    assert plan.end_date == "2026-12-01" and plan.legs[1].depart > plan.legs[0].arrive


async def test_party_of_two_pays_twice(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "从北京去西安，下周五出发，玩三天，两个人")
    assert d.plan is not None and d.plan.travellers == 2
    fare = d.plan.legs[0].price / 2
    assert str(int(fare)) in d.outputs("train_search") + d.outputs("flight_search")


async def test_breakfast_wish_reaches_the_hotel_search(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "明天从上海去杭州，三天两晚，预算3000，坐高铁，酒店要含早餐")
    assert d.calls("hotel_search")[0]["has_breakfast"] == 1
    assert d.plan is not None and d.plan.stays[0].breakfast is True


# -- what is missing is asked ---------------------------------------------------------------------
async def test_missing_date_is_asked_then_planned(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "从北京去上海玩两天")
    assert d.pending is not None and "哪天" in d.pending and d.plan is None
    d = await drive(planner, tools, "从北京去上海玩两天", answers=["下周五"])
    assert_sound_plan(d, origin="北京", destination="上海", start="2026-12-11", nights=1)


async def test_missing_date_in_english(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "I want to go from Beijing to Shanghai for 2 days", answers=["next Friday"], lang="en")
    assert "Which day" in d.questions[0][0]
    assert_sound_plan(d, origin="Beijing", destination="Shanghai", start="2026-12-11", nights=1)


async def test_no_origin_uses_current_location(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "去成都玩三天", answers=["明天"])
    assert d.calls("current_location") == [{}]
    plan = assert_sound_plan(d, origin="北京", destination="成都", start="2026-12-01", nights=2)
    assert any("北京" in n and "出发" in n for n in plan.notes)


async def test_date_asked_twice_then_explained(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "从北京去上海", answers=["随便", "不知道"])
    assert len(d.questions) == 2 and d.questions[0][0] != d.questions[1][0]
    assert d.plan is None and d.final_text and "日期" in d.final_text


async def test_an_answer_with_another_wish_is_kept_and_the_day_asked_again(
        planner: OfflinePlanner, tools: ToolCollection) -> None:
    """A traveller answers "which day?" with something else about the trip: it is kept, quoted
    back, and the day asked for again; it does not count as a date they could not give."""
    d = await drive(planner, tools, "从杭州去成都玩五天，三个人", answers=["坐飞机吧", "酒店要带早餐的", "12月11日"])
    assert len(d.questions) == 3
    assert "“坐飞机吧”" in d.questions[1][0] and "哪天出发" in d.questions[1][0]
    assert "“酒店要带早餐的”" in d.questions[2][0]
    plan = assert_sound_plan(d, origin="杭州", destination="成都", start="2026-12-11", nights=4)
    assert {leg.kind for leg in plan.legs} == {"flight"}
    assert plan.stays and all(s.breakfast for s in plan.stays)


async def test_an_english_answer_with_another_wish_is_quoted_back(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "Beijing to Xi'an for 3 days", answers=["by train please", "hmm", "no idea"], lang="en")
    assert [q for q, _ in d.questions] == [
        "Which day do you want to leave? (for example: tomorrow, next Friday, Dec 5)",
        'Noted: "by train please". One thing is still missing: which day do you want to leave? '
        "(for example: tomorrow, next Friday, Dec 5)",
        'I could not read that date. Please write it like "Dec 5" or "2026-12-05".',
    ]
    assert d.plan is None and d.final_text and "travel date" in d.final_text  # two answers that said nothing


async def test_next_month_is_asked_for_a_day_in_that_month(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "下个月想带爸妈去成都玩四五天，从杭州出发")
    assert d.plan is None and d.questions[0][0].startswith("12月哪天")  # NOW is 2026-11-30: next month is December
    assert d.questions[0][1] and all(o.startswith("2026-12-") for o in d.questions[0][1])


async def test_ambiguous_place_is_asked_with_options(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "下周五从北京去万达广场玩两天")
    question, options = d.questions[0]
    assert "万达广场" in question and len(options) == 4
    assert "万达广场(五角场店)（上海）" in options
    d = await drive(planner, tools, "下周五从北京去万达广场玩两天", answers=["万达广场(五角场店)（上海）"])
    plan = assert_sound_plan(d, origin="北京", destination="上海", start="2026-12-11", nights=1)
    assert plan.visits[0].name.startswith("万达广场")


async def test_misspelt_city_offers_close_matches(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "下周五从北京去Shangai玩两天", answers=["上海 (Shanghai)"])
    assert "上海 (Shanghai)" in d.questions[0][1]
    assert_sound_plan(d, origin="北京", destination="上海", start="2026-12-11", nights=1)


async def test_landmark_with_several_matches_is_asked(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "下周五从上海去北京玩三天，住在万达广场附近", answers=["万达广场(CBD店)"])
    _, options = d.questions[0]
    assert len(options) == 3 and "万达广场(CBD店)" in options
    assert d.calls("hotel_search")[0]["landmark"] == "万达广场(CBD店)"
    assert_sound_plan(d, origin="上海", destination="北京", start="2026-12-11", nights=2)


# -- impossible requests get an honest explanation -------------------------------------------------
@pytest.mark.parametrize(
    ("text", "lang", "fragment"),
    [
        ("下周五从北京去霍格沃茨玩三天", "zh", "霍格沃茨"),
        ("Go from Beijing to Gotham next Friday", "en", "Gotham"),
        ("2025年1月1日从北京去上海", "zh", "已经过去"),
        ("昨天从北京去上海", "zh", "已经过去"),
        ("From Beijing to Shanghai on 2025-03-01", "en", "already passed"),
        ("下周五从北京去北京玩两天", "zh", "都是"),
    ],
)
async def test_impossible_request_is_explained(planner: OfflinePlanner, tools: ToolCollection, text: str, lang: str, fragment: str) -> None:
    d = await drive(planner, tools, text, lang=lang)
    assert d.plan is None and d.questions == []
    assert d.final_text and fragment in d.final_text
    assert d.final_text.startswith("<answer>")


# -- follow-ups continue the conversation ----------------------------------------------------------
async def test_follow_up_cheaper_and_flight(planner: OfflinePlanner, tools: ToolCollection) -> None:
    first = await drive(planner, tools, "下周五从北京去上海玩三天")
    assert first.plan is not None
    cheaper = await drive(planner, tools, "便宜一点", messages=first.messages)
    assert cheaper.plan is not None and cheaper.plan.total_cost <= first.plan.total_cost
    assert cheaper.plan.start_date == "2026-12-11" and cheaper.plan.destination_city == "上海"
    flown = await drive(planner, tools, "改坐飞机", messages=cheaper.messages)
    assert flown.plan is not None and {leg.kind for leg in flown.plan.legs} == {"flight"}
    thanks = await drive(planner, tools, "谢谢", messages=flown.messages)
    assert thanks.plan is None and thanks.final_text and "便宜一点" in thanks.final_text
    intros = [m for m in thanks.messages if m.role is Role.ASSISTANT and "[offline planner]" in (m.content or "")]
    assert len(intros) == 1
    ids = [tc.id for m in thanks.messages if m.role is Role.ASSISTANT for tc in m.tool_calls or []]
    assert len(ids) == len(set(ids))


async def test_an_overnight_ride_says_the_day_it_arrives(planner: OfflinePlanner, tools: ToolCollection) -> None:
    """The cheapest way home here is an overnight train: its arrival shows as the next day, in
    the plan's own text and in its backups, not as an hour of the day it left."""
    first = await drive(planner, tools, "Beijing to Shanghai 12-14 March, two adults, budget 3000 yuan", lang="en")
    cheapest = await drive(planner, tools, "the cheapest", messages=first.messages)
    assert cheapest.plan is not None and cheapest.final_text
    overnight = [leg for leg in cheapest.plan.legs if leg.arrive[:10] > leg.depart[:10]]
    assert overnight, "the sandbox's cheapest ride home is expected to arrive the next day"
    for leg in overnight:
        line = next(ln for ln in cheapest.final_text.splitlines() if ln.startswith(f"- {leg.depart} "))
        assert f"→ {leg.arrive[11:]} (+1 day) " in line, line
    same_day = [leg for leg in cheapest.plan.legs if leg.arrive[:10] == leg.depart[:10]]
    for leg in same_day:
        line = next(ln for ln in cheapest.final_text.splitlines() if ln.startswith(f"- {leg.depart} "))
        assert f"→ {leg.arrive[11:]} " in line and "(+" not in line, line


async def test_no_overnight_and_no_hard_seat_take_the_t40_out(planner: OfflinePlanner, tools: ToolCollection) -> None:
    """The cheapest plan home was a 15-hour hard seat overnight; the traveller says no to both:
    the plan stays the cheapest of what is left, same-day rides in a proper seat."""
    first = await drive(planner, tools, "Beijing to Shanghai 12-14 March, two adults, budget 3000 yuan", lang="en")
    cheapest = await drive(planner, tools, "the cheapest", messages=first.messages)
    assert cheapest.plan is not None and any(leg.seat == "硬座" for leg in cheapest.plan.legs)
    better = await drive(planner, tools, "no overnight trains and no hard seats please", messages=cheapest.messages)
    assert better.plan is not None, better.final_text
    assert all(leg.arrive[:10] == leg.depart[:10] and leg.seat not in ("硬座", "无座") for leg in better.plan.legs), better.plan.legs
    assert (better.plan.start_date, better.plan.end_date, better.plan.travellers) == ("2027-03-12", "2027-03-14", 2)


@pytest.mark.parametrize(("depart", "arrive", "lang", "shown"), [
    ("2027-03-14 17:40", "2027-03-14 23:10", "en", "23:10"),
    ("2027-03-14 17:40", "2027-03-15 08:26", "en", "08:26 (+1 day)"),
    ("2027-03-14 17:40", "2027-03-15 08:26", "zh", "次日08:26"),
    ("2027-03-14 08:00", "2027-03-16 09:05", "en", "09:05 (+2 days)"),
    ("2027-03-14 08:00", "2027-03-16 09:05", "zh", "2天后09:05"),
    ("2027-03-31 22:00", "2027-04-01 06:00", "en", "06:00 (+1 day)"),  # across a month
    ("soon", "2027-04-01 06:00", "en", "2027-04-01 06:00"),  # unreadable: shown as given
])
def test_an_arrival_is_shown_with_the_days_it_takes(depart: str, arrive: str, lang: str, shown: str) -> None:
    assert arrival(depart, arrive, lang) == shown


async def test_a_meeting_is_reached_in_time_and_kept_free(planner: OfflinePlanner, tools: ToolCollection) -> None:
    """"A meeting at 2pm": the ride arrives by 13:00 (an hour to get there), and no sight is
    planned on that day before the meeting is over."""
    d = await drive(planner, tools, "Wuhan to Shenzhen on Friday Dec 4 for a meeting at 2pm, one night, cheapest option", lang="en")
    assert d.plan is not None, d.final_text
    out = d.plan.legs[0]
    assert out.depart.startswith("2026-12-04") and out.arrive <= "2026-12-04 13:00", out
    first_day = [v for v in d.plan.visits if v.date == "2026-12-04"]
    assert all((v.start or "") >= "16:00" for v in first_day), first_day


async def test_an_arrival_nothing_can_make_is_said(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "北京到广州，12月4日早上7点前到，住一晚", lang="zh")
    assert d.plan is not None, d.final_text
    assert d.plan.legs[0].arrive > "2026-12-04 07:00"
    assert any("没有能在07:00前到达" in n for n in d.plan.notes), d.plan.notes


async def test_follow_up_in_english_moves_the_date(planner: OfflinePlanner, tools: ToolCollection) -> None:
    first = await drive(planner, tools, "Beijing to Shanghai next Friday for 2 days", lang="en")
    moved = await drive(planner, tools, "move it to Dec 19", messages=first.messages)
    assert moved.plan is not None and (moved.plan.start_date, moved.plan.end_date) == ("2026-12-19", "2026-12-20")


# -- statelessness ---------------------------------------------------------------------------------
async def test_a_fresh_planner_resumes_a_stored_conversation(gazetteer: Gazetteer, tools: ToolCollection) -> None:
    a = OfflinePlanner(gazetteer)
    paused = await drive(a, tools, "从北京去上海玩两天")  # stops at the date question
    stored = [Message.from_json(m.to_json()) for m in paused.messages]
    call_id = stored[-1].tool_calls[0].id  # type: ignore[index]
    stored.append(Message.tool("下周五", tool_call_id=call_id, name="ask_human"))
    b = OfflinePlanner(gazetteer)  # "after a restart"
    assert (await a.ask_tool(stored)).model_dump() == (await b.ask_tool(stored)).model_dump()
    reply = await b.ask_tool(stored)
    assert {tc.function.name for tc in reply.tool_calls or []} >= {"train_search", "poi_search"}


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Plan a 3-day trip from Beijing to Shanghai, leaving 2026-12-05", "en"),
        ("3 day trip from Beijing to Shanghai, leaving 2026-12-05", "en"),
        ("Beijing to Shanghai for three days from 2026-12-05", "en"),
        ("北京到上海3天，12月5日出发", "zh"),
        ("北京到上海三天两晚，12月5日出发", "zh"),
    ],
)
async def test_a_three_day_request_gets_three_days_with_a_hotel_and_sights(planner, tools, text: str, lang: str):
    d = await drive(planner, tools, text, lang=lang)
    origin, destination = ("北京", "上海") if lang == "zh" else ("Beijing", "Shanghai")
    p = assert_sound_plan(d, origin=origin, destination=destination, start="2026-12-05", nights=2)
    assert p.end_date == "2026-12-07" and p.stays and sum(s.nights for s in p.stays) == 2 and p.visits


async def test_a_long_weekend_is_three_days(planner, tools):
    d = await drive(planner, tools, "A long weekend in Shanghai from Beijing", lang="en")
    assert not d.questions  # the coming long weekend: Friday to Sunday
    assert d.plan is not None and (d.plan.start_date, d.plan.end_date) == ("2026-12-04", "2026-12-06")
    d = await drive(planner, tools, "A long weekend in Shanghai from Beijing, leaving 2026-12-05", lang="en")
    assert d.plan is not None and (d.plan.start_date, d.plan.end_date) == ("2026-12-05", "2026-12-07")


async def test_after_a_plan_gibberish_is_not_thanked_and_another_trip_asks_its_date(planner, tools):
    first = await drive(planner, tools, "Beijing to Shanghai, 2 days, leaving 2026-12-05", lang="en")
    assert first.plan is not None
    after_first = list(first.messages)
    thanks = await drive(planner, tools, "thanks!", lang="en", messages=first.messages)
    assert "welcome" in (thanks.final_text or "")
    gibberish = await drive(planner, tools, "asdf", lang="en", messages=thanks.messages)
    assert "welcome" not in (gibberish.final_text or "") and "did not understand" in (gibberish.final_text or "")
    second = await drive(planner, tools, "Now Beijing to Hangzhou, 2 days", lang="en", messages=gibberish.messages)
    assert second.plan is None and second.pending is not None, second.final_text
    assert "day" in second.pending.lower()  # the date of the new trip is asked, not copied
    changed = await drive(planner, tools, "one more night please", lang="en", messages=after_first)
    assert changed.plan is not None  # a change keeps the trip, and its date
    assert (changed.plan.start_date, changed.plan.end_date) == ("2026-12-05", "2026-12-07")


@pytest.mark.parametrize(("text", "lang", "asked", "options"), [
    ("下周五从上海去云南玩三天", "zh", "云南有好几个城市可去，你想去哪一个？", ("昆明 (Kunming)", "大理 (Dali)", "丽江 (Lijiang)")),
    ("Shanghai to Yunnan next Friday for 3 days", "en", "Yunnan has several cities to go to. Which one would you like?",
     ("昆明 (Kunming)", "大理 (Dali)", "丽江 (Lijiang)")),
    ("下周五从广州去海南省玩三天", "zh", "海南省有好几个城市可去，你想去哪一个？", ("海口 (Haikou)", "三亚 (Sanya)")),
])
async def test_a_province_is_asked_which_of_its_cities(planner: OfflinePlanner, tools: ToolCollection, text: str,
                                                       lang: str, asked: str, options: tuple[str, ...]) -> None:
    """A province is a place people go to; before, "云南" was "not in my offline data"."""
    d = await drive(planner, tools, text, lang=lang)
    assert d.questions == [(asked, options)]
    d = await drive(planner, tools, text, answers=[options[-1]], lang=lang)
    assert d.plan is not None and d.plan.destination_city in (options[-1].split(" ")[0], options[-1].split("(")[1][:-1])


async def test_a_province_with_one_city_is_that_city(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "下周五从成都去西藏玩一周")
    assert not d.questions and d.plan is not None and d.plan.destination_city == "拉萨"


@pytest.mark.parametrize(("text", "lang", "title_end"), [
    ("下周三从北京去杭州出差，当天回来", "zh", "一日往返"),
    ("Beijing to Tianjin next Monday, back the same day", "en", ", day trip"),
])
async def test_back_the_same_day_is_a_day_trip(planner: OfflinePlanner, tools: ToolCollection, text: str, lang: str,
                                                title_end: str) -> None:
    """"当天回来" / "back the same day": no hotel, home that day; before, a night was planned."""
    d = await drive(planner, tools, text, lang=lang)
    assert d.plan is not None and d.plan.start_date == d.plan.end_date and not d.plan.stays
    assert d.plan.title.endswith(title_end), d.plan.title


async def test_with_the_kids_is_more_than_one(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "元旦想带孩子去哈尔滨看冰雕，从广州飞过去，玩4天")
    assert d.plan is not None and d.plan.travellers == 2


async def test_a_country_is_asked_which_of_its_cities(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "3月份想去日本赏樱，上海出发，一个礼拜左右")
    assert d.questions == [("日本有好几个城市可去，你想去哪一个？", ("东京 (Tokyo)", "大阪 (Osaka)", "札幌 (Sapporo)", "京都 (Kyoto)"))]
    d = await drive(planner, tools, "Shanghai to Japan in March for a week", lang="en")
    assert d.questions and d.questions[0][0].startswith("Japan has several cities")


async def test_not_too_early_in_a_first_request(planner: OfflinePlanner, tools: ToolCollection) -> None:
    """"不要太早的车" before any plan: the ride leaves from 10:00; "come back earlier" comes back
    between 10:00 and 14:00, not at dawn."""
    d = await drive(planner, tools, "明天从上海去杭州玩两天，不要太早的车")
    assert d.plan is not None and d.plan.legs[0].depart[11:16] >= "10:00"
    d = await drive(planner, tools, "Beijing to Tianjin tomorrow for 2 days, come back earlier", lang="en")
    assert d.plan is not None and "10:00" <= d.plan.legs[-1].depart[11:16] <= "14:00", d.plan.legs[-1]


async def test_where_to_is_asked_with_a_few_cities_near_home(planner: OfflinePlanner, tools: ToolCollection) -> None:
    """"A weekend getaway from Shanghai" names no place: the question offers the better-known
    cities a short trip away, and picking one plans it."""
    text = "weekend getaway from Shanghai, somewhere with nice old towns, 2 people"
    d = await drive(planner, tools, text, lang="en")
    assert d.questions == [("Which city would you like to go to?",
                            ("苏州 (Suzhou)", "宁波 (Ningbo)", "杭州 (Hangzhou)", "南京 (Nanjing)"))]
    d = await drive(planner, tools, text, answers=["杭州 (Hangzhou)"], lang="en")
    assert d.plan is not None and d.plan.destination_city == "Hangzhou" and d.plan.travellers == 2


async def test_by_a_day_at_noon_and_back_on_a_day_in_the_evening(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "I need to be in Guangzhou by Wednesday noon, coming from Changsha, then back Friday evening",
                    lang="en")
    assert d.plan is not None, d.final_text
    out, back = d.plan.legs[0], d.plan.legs[-1]
    assert out.arrive <= "2026-12-02 12:00" and out.depart.startswith("2026-12-02"), out
    assert back.depart.startswith("2026-12-04") and back.depart[11:16] >= "17:00", back


@pytest.mark.parametrize(("text", "lang"), [
    ("春节回老家哈尔滨，从深圳出发，腊月二十八走，初六回", "zh"),
    ("visiting my parents in Wuhan from Beijing next weekend", "en"),
])
async def test_going_home_books_no_hotel_and_plans_no_sights(planner: OfflinePlanner, tools: ToolCollection,
                                                             text: str, lang: str) -> None:
    """"春节回老家": a bed at home; before, seven nights in a Harbin hotel and a week of sights."""
    d = await drive(planner, tools, text, lang=lang)
    assert d.plan is not None, d.final_text
    assert not d.plan.stays and not d.plan.visits and len(d.plan.legs) == 2
    assert not d.calls("hotel_search") and not d.calls("poi_search")
    assert any("family" in n or "回家住" in n for n in d.plan.notes), d.plan.notes


@pytest.mark.parametrize("text", ["第一天晚点到也没关系", "到了再说"])
def test_words_after_to_that_name_no_place(planner: OfflinePlanner, text: str) -> None:
    """"到也没关系" ("arriving late is fine") was answered "“也没关系” is not in my offline data"."""
    assert planner.places.mentions(text) == []
