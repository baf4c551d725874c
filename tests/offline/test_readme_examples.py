"""The README's (and the docs') example requests, typed as written, through the offline planner and
its own Validator with the re-plan loop (tests/offline/conversation.py): each gives the plan it
promises, and the demo's plans pass the demo's Validator — team plans included, also after an
earlier one-person plan in the same conversation."""

from __future__ import annotations

from datetime import date

import pytest

from agent_core.offline import OfflinePlanner
from agent_core.validator.labels import Label
from agent_core.validator.provider_facts import ProviderFacts
from bot.run.review import PlanValidator
from tests.offline.conversation import Conversation, Reply
from tests.offline.test_offline_planner import NOW
from tools.collection import ToolCollection
from tools.plan import TripPlan
from tools.travel import Gazetteer, SandboxProvider

SATISFIED = {Label.EXCELLENT.zh, Label.NO_CONTINGENCY.zh}
TEAM_README = "@Trip Planner offsite in Hangzhou, 12–14 March, for @ana (Beijing), @bo (Shanghai) and @chen (Shenzhen)"
TEAM_ISSUE = "offsite in Hangzhou, 12–14 March, for Ana (Beijing), Bo (Shanghai) and Chen"


@pytest.fixture(scope="module")
def reviewer(gazetteer: Gazetteer, tools: ToolCollection) -> PlanValidator:
    facts = ProviderFacts(SandboxProvider(gazetteer), gazetteer)
    return PlanValidator(facts=facts, tools=tools, rubric_model=None, clock=lambda: NOW)


def talk(planner: OfflinePlanner, tools: ToolCollection, reviewer: PlanValidator, lang: str) -> Conversation:
    return Conversation(planner, tools, reviewer, lang)


def passed(reply: Reply) -> TripPlan:
    """The plan, graded satisfied by its own Validator at the first review (nothing to re-plan)."""
    assert reply.plan is not None, reply.text
    assert reply.verdict is not None and reply.verdict.label in SATISFIED, reply.verdict
    assert reply.reviews == 0 and not reply.verdict.failed_checks
    return reply.plan


def team(plan: TripPlan) -> list[tuple[str, str]]:
    return [(p.name, p.home_city) for p in plan.party]


async def test_the_team_request_of_the_docs(planner, tools, reviewer) -> None:
    plan = passed(await talk(planner, tools, reviewer, "en").say(TEAM_README))
    assert team(plan) == [("@ana", "Beijing"), ("@bo", "Shanghai"), ("@chen", "Shenzhen")]
    assert (plan.destination_city, plan.start_date, plan.end_date, plan.travellers) == ("Hangzhou", "2027-03-12", "2027-03-14", 3)
    for person in plan.party:  # each traveller's way there and back, from their own city
        assert [leg.destination_city for leg in person.legs] == ["Hangzhou", person.home_city]
    assert abs(sum(plan.cost_of(p.name) for p in plan.party) - plan.total_cost) < 0.05


async def test_the_team_request_of_the_issue_asks_chen_then_plans(planner, tools, reviewer) -> None:
    chat = talk(planner, tools, reviewer, "en")
    asked = await chat.say(TEAM_ISSUE)
    assert asked.plan is None and asked.questions == ["Chen, which city are you leaving from?"]
    assert "did not understand" not in asked.text
    plan = passed(await chat.answer("Shenzhen"))
    assert team(plan) == [("Ana", "Beijing"), ("Bo", "Shanghai"), ("Chen", "Shenzhen")]
    assert (plan.start_date, plan.end_date) == ("2027-03-12", "2027-03-14")


async def test_a_team_request_after_a_one_person_plan_is_a_team_trip(planner, tools, reviewer) -> None:
    chat = talk(planner, tools, reviewer, "en")
    one = passed(await chat.say("Beijing to Shanghai for one night, two of us, tomorrow"))
    assert (one.origin_city, one.destination_city, one.travellers) == ("Beijing", "Shanghai", 2)
    plan = passed(await chat.say(TEAM_README))
    assert team(plan) == [("@ana", "Beijing"), ("@bo", "Shanghai"), ("@chen", "Shenzhen")]
    assert plan.destination_city == "Hangzhou" and plan.travellers == 3


async def test_the_telegram_example_of_the_readme(planner, tools, reviewer) -> None:
    chat = talk(planner, tools, reviewer, "en")
    asked = await chat.say("@trip_bot Beijing to Shanghai for one night, two of us")
    assert asked.questions and "Which day" in asked.questions[0] and asked.drive.questions[0][1][0].endswith("(tomorrow)")
    plan = passed(await chat.answer(asked.drive.questions[0][1][0]))
    assert (plan.origin_city, plan.destination_city, plan.travellers) == ("Beijing", "Shanghai", 2)
    assert (plan.start_date, plan.end_date) == ("2026-12-01", "2026-12-02")


async def test_xian_for_three_in_may(planner, tools, reviewer) -> None:
    chat = talk(planner, tools, reviewer, "en")
    asked = await chat.say("@your_bot plan Xi'an for 3 people in May")
    question, options = asked.drive.questions[0]
    assert "May" in question and options and all(o.startswith("2027-05-") for o in options)
    plan = passed(await chat.answer(options[0]))
    assert (plan.destination_city, plan.travellers, plan.start_date) == ("Xi'an", 3, options[0][:10])


@pytest.mark.parametrize(("text", "lang", "origin", "destination", "start", "nights", "travellers"), [
    ("下周五从北京去上海玩两天", "zh", "北京", "上海", "2026-12-11", 1, 1),
    ("下周五从上海去杭州，玩两天，预算 2000 元", "zh", "上海", "杭州", "2026-12-11", 1, 1),
    ("五一带父母从成都去西安玩四天", "zh", "成都", "西安", "2027-05-01", 3, 3),
    ("Shanghai to Hangzhou next Friday, two days, budget 2000 yuan", "en", "Shanghai", "Hangzhou", "2026-12-11", 1, 1),
    ("Four days in Xi'an from Chengdu with my parents over May Day", "en", "Chengdu", "Xi'an", "2027-05-01", 3, 3),
    ("Beijing to Shenzhen on business next Monday: train or plane?", "en", "Beijing", "Shenzhen", "2026-12-07", 1, 1),
])
async def test_the_suggested_requests_plan_what_they_say(planner, tools, reviewer, text, lang, origin, destination,
                                                         start, nights, travellers) -> None:
    plan = passed(await talk(planner, tools, reviewer, lang).say(text))
    assert (plan.origin_city, plan.destination_city, plan.start_date, plan.travellers) == (origin, destination, start, travellers)
    assert (date.fromisoformat(plan.end_date) - date.fromisoformat(plan.start_date)).days == nights


async def test_follow_ups_after_a_readme_plan_pass_the_validator_too(planner, tools, reviewer) -> None:
    chat = talk(planner, tools, reviewer, "en")
    first = passed(await chat.say("Beijing to Shanghai next Friday for 2 days, 2 people"))
    cheaper = passed(await chat.say("make it cheaper"))
    assert (cheaper.origin_city, cheaper.destination_city, cheaper.travellers, cheaper.start_date) == (
        first.origin_city, first.destination_city, 2, first.start_date)
    assert cheaper.total_cost < first.total_cost
    longer = passed(await chat.say("one more night"))
    assert (longer.start_date, longer.end_date, longer.travellers) == ("2026-12-11", "2026-12-13", 2)
    again = await chat.say("make it cheaper")
    assert again.plan is None and "cheapest" in again.text  # not reversed, not dearer: kept, and said so
    later = passed(await chat.say("a day later"))
    assert (later.origin_city, later.start_date, later.end_date, later.travellers) == ("Beijing", "2026-12-12", "2026-12-14", 2)
