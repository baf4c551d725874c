"""Follow-ups change what was asked and nothing else (issue 31): a table of changes in Chinese and
English, each applied to a planned trip through the offline planner and the sandbox tools.

For every case the request state (agent_core/offline/state.py) before and after is compared
field by field — what the case names must change to the value given, everything else must
stay — and the new plan must be the trip the state describes (dates, direction, party,
transport, hotel class), cheaper when cheaper was asked. A change that cannot be made leaves
the state as it was, submits no plan and says so.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from agent_core.offline import OfflinePlanner
from agent_core.offline.state import RequestState, read_state
from agent_core.offline.transcript import read_transcript
from agent_core.schema import Message
from tests.offline.test_offline_planner import NOW, Drive, drive
from tools.collection import ToolCollection
from tools.plan import TripPlan
from tools.travel import Gazetteer, SandboxProvider

BASES = {
    "en": ("Beijing to Shanghai next Friday for 3 days, 2 people", "en"),
    "zh": ("下周五从北京去上海玩三天，两个人", "zh"),
    "team_en": ("Offsite in Hangzhou on 2026-12-12 for 2 nights for Ana (Beijing), Bo (Shanghai) and Chen (Shenzhen)", "en"),
    "team_zh": ("12月12日杭州团建两晚：@ana（北京）、@bo（上海）、@chen（深圳）", "zh"),
    "tianjin": ("Beijing to Tianjin next Friday for 2 days", "en"),  # no flights between them in the sandbox
}
D = date.fromisoformat

# (base, follow-up, what changes in the request state); everything else must stay
CHANGES: list[tuple[str, str, dict[str, Any]]] = [
    ("en", "make it cheaper", {"cheaper": True}),
    ("en", "one more night", {"nights": 3}),
    ("en", "one night less", {"nights": 1}),
    ("en", "two more nights please", {"nights": 4}),
    ("en", "make it 4 days", {"nights": 3}),
    ("en", "leave a day later", {"start": D("2026-12-12")}),
    ("en", "a day earlier", {"start": D("2026-12-10")}),
    ("en", "move it to Dec 19", {"start": D("2026-12-19")}),
    ("en", "12–14 March instead", {"start": D("2027-03-12")}),
    ("en", "by plane", {"transport": "flight"}),
    ("en", "fly instead", {"transport": "flight"}),
    ("en", "one more person", {"travellers": 3}),
    ("en", "one less person", {"travellers": 1}),
    ("en", "4 people now", {"travellers": 4}),
    ("en", "go to Hangzhou instead", {"destination": "Hangzhou"}),
    ("en", "from Tianjin instead", {"origin": "Tianjin"}),
    ("en", "a budget hotel please", {"stars": 2}),
    ("en", "a nicer hotel", {"stars": 4}),
    ("en", "a 5-star hotel", {"stars": 5}),
    ("en", "budget 2500", {"budget": 2500.0}),
    ("en", "first class seats", {"seat": "一等座"}),
    ("en", "hotel with breakfast", {"breakfast": True}),
    ("en", "leave in the afternoon", {"depart_after": "12:00"}),
    # the way back: its day is the day home, its time when to come back; the start stays
    ("en", "can we come back Sunday evening instead?", {"return_after": "17:00"}),
    ("en", "come back on Monday instead", {"nights": 3}),
    ("en", "return after 6pm", {"return_after": "18:00"}),
    ("en", "my brother is joining us", {"travellers": 3}),
    ("en", "my wife can't come", {"travellers": 1}),
    # a weekday said alone is the trip's (the one within three days of its start), weeks move it
    ("en", "make it Saturday to Monday", {"start": D("2026-12-12")}),
    ("en", "leave on Thursday instead", {"start": D("2026-12-10")}),
    ("en", "move everything one week later", {"start": D("2026-12-18")}),
    ("en", "drop the second night", {"nights": 1}),
    ("en", "can we get first class on the train?", {"seat": "一等座", "transport": "train"}),  # a request, not a question
    # earlier or later in the day than the plan's ride (its outbound 08:00, its return 16:45)
    ("en", "can we leave a bit later?", {"depart_after": "09:00"}),
    ("en", "they're not great with early mornings", {"depart_after": "09:30"}),  # not "the morning"
    ("en", "come back later", {"return_after": "17:45"}),
    ("en", "come back earlier", {"return_after": "12:45"}),
    ("zh", "便宜一点", {"cheaper": True}),
    ("zh", "周日晚上回来", {"return_after": "17:00"}),
    ("zh", "返程坐晚上的车", {"return_after": "17:00"}),
    ("zh", "改成周一回", {"nights": 3}),
    ("zh", "我妈也去", {"travellers": 3}),
    ("zh", "能不能晚点出发", {"depart_after": "09:00"}),
    ("zh", "改成周六出发", {"start": D("2026-12-12")}),
    ("zh", "推迟一周", {"start": D("2026-12-18")}),
    ("zh", "加一天", {"nights": 3}),  # one more, not a one-day trip
    ("zh", "加两晚", {"nights": 4}),
    ("zh", "我老婆不去了", {"travellers": 1}),
    ("zh", "多住一晚", {"nights": 3}),
    ("zh", "少住一晚", {"nights": 1}),
    ("zh", "晚一天出发", {"start": D("2026-12-12")}),
    ("zh", "提前一天", {"start": D("2026-12-10")}),
    ("zh", "改到12月18日", {"start": D("2026-12-18")}),
    ("zh", "改坐飞机", {"transport": "flight"}),
    ("zh", "加一个人", {"travellers": 3}),
    ("zh", "少一个人", {"travellers": 1}),
    ("zh", "改去杭州", {"destination": "杭州"}),
    ("zh", "改从天津出发", {"origin": "天津"}),
    ("zh", "住经济型酒店", {"stars": 2}),
    ("zh", "住好一点的酒店", {"stars": 4}),
    ("zh", "预算2500元", {"budget": 2500.0}),
    ("zh", "要一等座", {"seat": "一等座"}),
    ("zh", "酒店要含早餐", {"breakfast": True}),
    ("zh", "下午出发", {"depart_after": "12:00"}),
    ("team_en", "add Dan (Wuhan)", {"party": ("Ana", "Bo", "Chen", "Dan"), "travellers": 4}),
    ("team_en", "Bo can't come", {"party": ("Ana", "Chen"), "travellers": 2}),
    ("team_en", "one more night", {"nights": 3}),
    ("team_en", "a day later", {"start": D("2026-12-13")}),
    ("team_en", "make it cheaper", {"cheaper": True}),
    ("team_en", "meet in Suzhou instead", {"destination": "Suzhou"}),
    ("team_zh", "加上 @dan（武汉）", {"party": ("@ana", "@bo", "@chen", "@dan"), "travellers": 4}),
    ("team_zh", "多住一晚", {"nights": 3}),
    ("team_zh", "便宜一点", {"cheaper": True}),
]

# changes that cannot be made: the state stays, no plan is submitted, the reply says so
REFUSED: list[tuple[str, str, str]] = [
    ("en", "change it to 2025-01-01", "already passed"),
    ("en", "go to Hogwarts instead", "Hogwarts"),
    ("en", "3 nights less", "cannot be that much shorter"),
    ("zh", "改去霍格沃茨", "霍格沃茨"),
    ("zh", "少住五晚", "没法再缩短"),
    ("en", "come back on Dec 10", "before leaving on 2026-12-11"),
    ("zh", "12月9日回来", "在出发日期2026-12-11之前"),
    ("team_en", "one more person", "who joins"),
]


def facts(s: RequestState) -> dict[str, Any]:
    r = s.request
    return {
        "origin": r.origin, "destination": r.destination, "start": r.start, "nights": r.trip_nights,
        "travellers": s.travellers, "transport": r.transport, "stars": r.stars, "budget": r.budget,
        "cheaper": bool(r.cheaper), "seat": r.seat, "breakfast": r.breakfast, "depart_after": r.depart_after,
        "return_after": r.return_after, "overnight": r.overnight, "hard_seat": r.hard_seat,
        "party": tuple(t.label for t in s.party) or None, "homes": tuple(t.home_city for t in s.party) or None,
    }


@pytest.fixture(scope="module")
def sandbox(gazetteer: Gazetteer) -> SandboxProvider:
    return SandboxProvider(gazetteer)


@pytest.fixture(scope="module")
def bases() -> dict[str, Drive]:
    return {}


async def base(planner: OfflinePlanner, tools: ToolCollection, bases: dict[str, Drive], key: str) -> Drive:
    if key not in bases:
        text, lang = BASES[key]
        bases[key] = await drive(planner, tools, text, lang=lang)
        assert bases[key].plan is not None, bases[key].final_text
    return bases[key]


def state_of(planner: OfflinePlanner, messages: list[Message]) -> RequestState:
    return read_state(read_transcript(messages), planner.places, NOW.date())


def city(gazetteer: Gazetteer, name: str | None) -> str | None:
    return gazetteer.resolve_city(name).id if name else None


def assert_plan_is_the_state(plan: TripPlan, s: RequestState, old: TripPlan, sandbox: SandboxProvider, gazetteer: Gazetteer) -> None:
    r = s.request
    assert r.start is not None and r.trip_nights is not None
    assert (D(plan.start_date), (D(plan.end_date) - D(plan.start_date)).days) == (r.start, r.trip_nights)
    assert plan.travellers == s.travellers
    assert city(gazetteer, plan.destination_city) == city(gazetteer, r.destination)
    if s.team:
        assert [(p.name, city(gazetteer, p.home_city)) for p in plan.party] == [
            (t.label, city(gazetteer, t.home_city)) for t in s.party]
        legs = [leg for p in plan.party for leg in p.legs]
    else:
        assert city(gazetteer, plan.origin_city) == city(gazetteer, r.origin)  # the direction is kept
        assert city(gazetteer, plan.legs[0].destination_city or "") == city(gazetteer, r.destination)
        legs = plan.legs
    if r.transport:
        assert {leg.kind for leg in legs} == {r.transport}
    if r.stars is not None:
        for stay in plan.stays:
            hotel = sandbox.get_hotel(stay.hotel_id, D(stay.checkin_date), D(stay.checkout_date))
            assert hotel is not None
            assert hotel.stars <= 2 if r.stars <= 2 else hotel.stars >= r.stars, (stay.name, hotel.stars)
    if r.seat and not s.team:
        assert all(leg.seat == r.seat for leg in legs if leg.kind == "train")
    if r.breakfast:
        assert all(stay.breakfast for stay in plan.stays)
    if r.overnight is False:
        assert all(leg.arrive[:10] == leg.depart[:10] for leg in legs), legs
    if r.hard_seat is False:
        assert all(leg.seat not in ("硬座", "无座") for leg in legs), legs
    if r.return_after and not s.team:
        assert plan.legs[-1].depart[11:16] >= r.return_after, plan.legs[-1]
    if r.return_before and not s.team:
        assert plan.legs[-1].depart[11:16] <= r.return_before, plan.legs[-1]
    if r.depart_after and not s.team:
        assert plan.legs[0].depart[11:16] >= r.depart_after, plan.legs[0]


@pytest.mark.parametrize(("key", "follow_up", "changed"), CHANGES, ids=[f"{k}:{f}" for k, f, _ in CHANGES])
async def test_a_follow_up_changes_what_it_asks_and_nothing_else(
    planner: OfflinePlanner, tools: ToolCollection, gazetteer: Gazetteer, sandbox: SandboxProvider,
    bases: dict[str, Drive], key: str, follow_up: str, changed: dict[str, Any],
) -> None:
    first = await base(planner, tools, bases, key)
    assert first.plan is not None
    before = facts(state_of(planner, first.messages))
    d = await drive(planner, tools, follow_up, lang=BASES[key][1], messages=list(first.messages))
    state = state_of(planner, d.messages)
    after = facts(state)
    expected = {**before, **changed}
    if "party" in changed:
        expected["homes"] = after["homes"]  # the newcomer's home city comes with them
    assert after == expected, {k: (before[k], after[k]) for k in after if after[k] != before[k]}
    assert d.plan is not None, d.final_text
    assert_plan_is_the_state(d.plan, state, first.plan, sandbox, gazetteer)
    if "cheaper" in changed:
        assert d.plan.total_cost < first.plan.total_cost


@pytest.mark.parametrize(("key", "follow_up", "said"), REFUSED, ids=[f"{k}:{f}" for k, f, _ in REFUSED])
async def test_a_change_that_cannot_be_made_says_so_and_keeps_the_plan(
    planner: OfflinePlanner, tools: ToolCollection, bases: dict[str, Drive], key: str, follow_up: str, said: str,
) -> None:
    first = await base(planner, tools, bases, key)
    before = facts(state_of(planner, first.messages))
    d = await drive(planner, tools, follow_up, lang=BASES[key][1], messages=list(first.messages))
    assert d.plan is None and not d.questions
    assert d.final_text is not None and said in d.final_text
    assert ("stays as it was" in d.final_text) or ("保持不变" in d.final_text)
    assert facts(state_of(planner, d.messages)) == before
    # and the next change applies to the plan that was kept
    again = await drive(planner, tools, "one more night" if BASES[key][1] == "en" else "多住一晚", lang=BASES[key][1],
                        messages=list(d.messages))
    assert again.plan is not None and facts(state_of(planner, again.messages))["nights"] == (before["nights"] or 0) + 1


def test_the_table_has_forty_follow_ups_in_both_languages() -> None:
    langs = [BASES[k][1] for k, _, _ in CHANGES]
    assert len(CHANGES) >= 40 and langs.count("zh") >= 15 and langs.count("en") >= 15


async def test_a_change_the_sandbox_cannot_serve_is_said_and_the_plan_kept(
    planner: OfflinePlanner, tools: ToolCollection, bases: dict[str, Drive],
) -> None:
    first = await base(planner, tools, bases, "tianjin")
    d = await drive(planner, tools, "by plane", lang="en", messages=list(first.messages))
    assert d.plan is None and d.final_text is not None
    assert "no flight for this route" in d.final_text and "stays as it was" in d.final_text


@pytest.mark.parametrize(("key", "follow_up"), [("zh", "第二天想去迪士尼"), ("en", "on day 2 we want to go to Disneyland")])
async def test_a_sight_of_the_city_is_a_sight_not_a_new_destination(
    planner: OfflinePlanner, tools: ToolCollection, bases: dict[str, Drive], key: str, follow_up: str,
) -> None:
    """"迪士尼" is 上海迪士尼乐园 on a trip to Shanghai: the trip stays (destination, dates, party) and
    the plan visits it; before, the planner asked whether 悉尼 or 迪拜 was meant and the trip
    became one night shorter ("第二天" read as a two-day trip)."""
    first = await base(planner, tools, bases, key)
    before = facts(state_of(planner, first.messages))
    d = await drive(planner, tools, follow_up, lang=BASES[key][1], messages=list(first.messages))
    assert not d.questions and d.plan is not None, d.final_text
    assert facts(state_of(planner, d.messages)) == before
    assert any(v.name == "上海迪士尼乐园" for v in d.plan.visits), d.plan.visits



async def test_a_traveller_who_cannot_fly_goes_by_train_and_the_team_still_gets_a_plan(
    planner: OfflinePlanner, tools: ToolCollection, bases: dict[str, Drive],
) -> None:
    """"Chen will fly" on a team trip to Hangzhou: Bo, from Shanghai next door, has no flight in
    the sandbox; before, the whole team got "no train or flight from Shanghai"."""
    first = await base(planner, tools, bases, "team_en")
    d = await drive(planner, tools, "Chen will fly", lang="en", messages=list(first.messages))
    assert d.plan is not None, d.final_text
    kinds = {p.name: {leg.kind for leg in p.legs} for p in d.plan.party}
    assert kinds == {"Ana": {"flight"}, "Bo": {"train"}, "Chen": {"flight"}}, kinds
    assert any("Bo" in n and "train" in n for n in d.plan.notes), d.plan.notes
