"""Team trips on the plan side: travellers read from a request, the offline planner's
three-origin plan on the sandbox, and the checks that a party can meet."""

from __future__ import annotations

from datetime import datetime

from agent_core.offline import OfflinePlanner
from agent_core.party import duplicate_labels, read_party
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.party import check_party
from tests.offline.test_offline_planner import drive
from tools.collection import ToolCollection
from tools.party_plan import meeting_time, outbound, party_problems
from tools.plan import Leg, TravellerLegs, TripPlan
from tools.submit_plan import plan_problems

EN_REQUEST = ("Team offsite in Hangzhou on 2026-12-12 for 2 nights for <@U0ANA> (Beijing), <@U0BO> (Shanghai) "
              "and <@U0CHEN> (Shenzhen)")


def test_travellers_are_read_from_mentions_handles_and_names() -> None:
    slack = read_party(EN_REQUEST)
    assert [(t.label, t.home_city, t.user_id) for t in slack] == [
        ("<@U0ANA>", "Beijing", "U0ANA"), ("<@U0BO>", "Shanghai", "U0BO"), ("<@U0CHEN>", "Shenzhen", "U0CHEN")]
    telegram = read_party("12月12日杭州团建两晚：@ana（北京）、@bo（上海）、@chen")
    assert [(t.label, t.home_city) for t in telegram] == [("@ana", "北京"), ("@bo", "上海"), ("@chen", None)]
    plain = read_party("Trip to Hangzhou for Ana from Beijing and Bo (Shanghai)")
    assert [(t.label, t.home_city) for t in plain] == [("Ana", "Beijing"), ("Bo", "Shanghai")]
    assert plain[0].named_by("ana") and slack[1].named_by("<@U0BO>") and not slack[1].named_by("<@U0ANA>")
    twins = read_party("for Li Wei (Beijing), Li Wei (Shanghai) and Bo (Shenzhen)")
    assert [(t.label, t.home_city) for t in twins] == [("Li Wei", "Beijing"), ("Li Wei", "Shanghai"), ("Bo", "Shenzhen")]
    assert duplicate_labels(twins) == ["Li Wei", "Li Wei"]


async def test_three_origins_meet_in_hangzhou_on_the_sandbox(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, EN_REQUEST, lang="en")
    assert d.plan is not None and not d.questions
    plan = d.plan
    assert [(p.name, p.home_city) for p in plan.party] == [
        ("<@U0ANA>", "Beijing"), ("<@U0BO>", "Shanghai"), ("<@U0CHEN>", "Shenzhen")]
    assert plan.travellers == 3 and plan.legs == [] and plan.destination_city == "Hangzhou"
    meet = meeting_time(plan)
    assert meet is not None
    for person in plan.party:  # everyone is in before the first shared item, on their own train
        [there] = outbound(person)
        assert there.destination_city == "Hangzhou" and there.origin_city == person.home_city
        assert datetime.strptime(there.arrive, "%Y-%m-%d %H:%M") <= meet
        assert len(person.legs) == 2 and person.legs[1].destination_city == person.home_city
    assert plan_problems(plan) == [] and party_problems(plan) == []
    assert abs(sum(plan.cost_of(p.name) for p in plan.party) - plan.total_cost) < 0.05
    assert d.final_text is not None and "<@U0BO>" in d.final_text  # each traveller's rides are listed


async def test_a_traveller_without_a_home_city_is_asked_by_name(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "12月12日杭州团建两晚：@ana（北京）、@bo（上海）、@chen", ["深圳"])
    assert d.questions == [("@chen，你从哪个城市出发？", ())]
    calls = [c for c in d.calls("ask_human")]
    assert calls == [{"inquire": "@chen，你从哪个城市出发？", "to": "@chen"}]
    assert d.plan is not None and [p.home_city for p in d.plan.party] == ["北京", "上海", "深圳"]


def _leg(number: str, a: str, b: str, depart: str, arrive: str) -> Leg:
    return Leg(kind="train", number=number, origin=a, destination=b, origin_city=a, destination_city=b,
               depart=depart, arrive=arrive, price=100)


def test_a_late_arrival_and_an_early_departure_are_caught() -> None:
    plan = TripPlan(
        title="t", origin_city="北京、上海", destination_city="杭州", start_date="2026-12-12", end_date="2026-12-13",
        travellers=2, visits=[{"poi_id": "p", "name": "西湖", "city": "杭州", "date": "2026-12-12", "start": "14:00",
                               "duration_min": 120}],
        party=[TravellerLegs(name="@ana", home_city="北京", legs=[_leg("G1", "北京", "杭州", "2026-12-12 08:00", "2026-12-12 13:00")]),
               TravellerLegs(name="@bo", home_city="上海", legs=[_leg("G2", "上海", "杭州", "2026-12-12 14:00", "2026-12-12 15:00"),
                                                              _leg("G3", "杭州", "上海", "2026-12-12 15:30", "2026-12-12 16:30")])],
    )
    plan.total_cost = plan.computed_total()
    problems = party_problems(plan)
    assert any("@bo" in p and "after the party meets" in p for p in problems)
    assert any("@bo" in p and "before the last shared item ends" in p for p in problems)
    report = CheckReport()
    check_party(plan, report)
    assert {(f.category, f.item) for f in report.findings} == {(Category.LOGIC, "party[1] @bo")}


async def test_two_travellers_with_one_name_are_not_planned_as_one(planner: OfflinePlanner, tools: ToolCollection) -> None:
    d = await drive(planner, tools, "Offsite in Hangzhou on 2026-12-12 for Li Wei (Beijing), Li Wei (Shanghai) and Bo (Shenzhen)",
                    lang="en")
    assert d.plan is None and d.final_text is not None and 'both called "Li Wei"' in d.final_text
