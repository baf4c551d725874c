"""The Validator grades a plan against the request as it stands after the person's changes (the
request state it reads itself from their words), a team traveller's view against that
traveller's share, and the dates the person wrote (not the planner's reading of them)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from agent_core.schema import Message, Origin
from agent_core.validator.findings import Category
from agent_core.validator.labels import Label
from agent_core.validator.validator import Assessment, Validator
from tests.offline.test_offline_planner import drive
from tests.validator_support import Sandbox, load_sandbox
from tools.plan import TripPlan

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))
GOOD = (Label.EXCELLENT, Label.NO_CONTINGENCY)


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


@pytest.fixture(scope="module")
def validator(sandbox: Sandbox) -> Validator:
    return Validator(facts=sandbox.facts(), tools=sandbox.tools, model=None)


async def grade(validator: Validator, plan: TripPlan, messages: list[Message], request: str) -> Assessment:
    return await validator.assess(request=request, reply="", plan=plan, messages=messages, lang="en", now=NOW)


def findings(a: Assessment) -> set[tuple[Category, str]]:
    assert a.report is not None
    return {(f.category, f.item) for f in a.report.findings}


@pytest.mark.parametrize(("follow_up", "category", "item"), [
    ("one more night", Category.NEED, "start_date..end_date"),
    ("go to Hangzhou instead", Category.NEED, "destination_city"),
    ("one more person", Category.NEED, "travellers"),
    ("a budget hotel please", Category.NEED, "stays[0]"),
])
async def test_the_plan_is_graded_against_the_request_after_the_change(
    sandbox: Sandbox, validator: Validator, follow_up: str, category: Category, item: str,
) -> None:
    from agent_core.offline import OfflinePlanner

    planner = OfflinePlanner(sandbox.gazetteer)
    first = await drive(planner, sandbox.tools, "Beijing to Shanghai next Friday for 2 days, 2 people", lang="en")
    assert first.plan is not None
    changed = await drive(planner, sandbox.tools, follow_up, lang="en", messages=list(first.messages))
    assert changed.plan is not None
    # the new plan passes against the changed request; the old one, read against it, does not
    assert (await grade(validator, changed.plan, changed.messages, follow_up)).label in GOOD
    old = await grade(validator, first.plan, changed.messages, follow_up)
    assert any(c is category and i.startswith(item) for c, i in findings(old)), old.report


async def test_the_review_note_is_not_read_as_the_persons_words(sandbox: Sandbox, validator: Validator) -> None:
    """A review note that names another train, city and day changes nothing the plan is graded by
    (neither with its origin nor, as stored before origins, by its "[review]" prefix)."""
    from agent_core.offline import OfflinePlanner

    first = await drive(OfflinePlanner(sandbox.gazetteer), sandbox.tools, "Beijing to Shanghai next Friday for 2 days",
                        lang="en")
    assert first.plan is not None
    note = "[review] Review verdict: not satisfied. - [impossible timeline] legs[0] K8848 北京→上海 2027-01-16: 3 nights"
    for stored in (Message.user(note, origin=Origin.REVIEW), Message.user(note)):
        a = await grade(validator, first.plan, [*first.messages, stored], "Beijing to Shanghai next Friday for 2 days")
        assert a.label in GOOD, a.report


async def test_a_team_travellers_view_is_priced_for_that_traveller(sandbox: Sandbox, validator: Validator) -> None:
    from agent_core.offline import OfflinePlanner

    request = "Offsite in Hangzhou on 2026-12-12 for 2 nights for Ana (Beijing), Bo (Shanghai) and Chen (Shenzhen)"
    d = await drive(OfflinePlanner(sandbox.gazetteer), sandbox.tools, request, lang="en")
    assert d.plan is not None and len(d.plan.party) == 3
    assert (await grade(validator, d.plan, d.messages, request)).label in GOOD  # no false alarm on the shared room rate
    # a wrong fare on Bo's own train is still Bo's finding, priced for one
    bad = d.plan.model_copy(deep=True)
    leg = bad.party[1].legs[0]
    leg.price += 40
    bad.total_cost = bad.computed_total()
    a = await grade(validator, bad, d.messages, request)
    assert a.label is Label.NOT_TRUE
    assert any(c is Category.FACT and leg.number in i for c, i in findings(a))


@pytest.mark.parametrize(("request_text", "wrong_start"), [
    ("Beijing to Shanghai, 12–14 March", "2027-03-14"),
    ("Beijing to Shanghai 20th to 23rd of January", "2027-01-23"),
    ("北京到上海，3月12日至14日", "2027-03-14"),
])
async def test_the_validator_reads_the_written_dates_itself(
    sandbox: Sandbox, validator: Validator, request_text: str, wrong_start: str,
) -> None:
    """A plan on the dates the old reading took (the end day as the start) is a broken constraint."""
    from agent_core.offline import OfflinePlanner

    lang = "zh" if "北京" in request_text else "en"
    d = await drive(OfflinePlanner(sandbox.gazetteer), sandbox.tools, request_text, lang=lang)
    assert d.plan is not None
    assert (await grade(validator, d.plan, d.messages, request_text)).label in GOOD
    moved = await drive(OfflinePlanner(sandbox.gazetteer), sandbox.tools, f"from Beijing to Shanghai on {wrong_start} for 2 nights",
                        lang="en")
    assert moved.plan is not None and moved.plan.start_date == wrong_start
    a = await grade(validator, moved.plan, [Message.user(request_text), *moved.messages[2:]], request_text)
    assert any(c is Category.CONSTRAINT for c, _ in findings(a)), a.report


async def test_the_rubric_is_given_the_request_after_the_changes(sandbox: Sandbox) -> None:
    """A follow-up run starts with "one more night": the rubric model reads the trip that makes."""
    from agent_core.offline import OfflinePlanner
    from tests.fakes.openai_server import FakeOpenAI, reply
    from tests.spine_support import make_llm

    planner = OfflinePlanner(sandbox.gazetteer)
    first = await drive(planner, sandbox.tools, "Beijing to Shanghai next Friday for 2 days, 2 people", lang="en")
    longer = await drive(planner, sandbox.tools, "one more night", lang="en", messages=list(first.messages))
    assert longer.plan is not None
    async with FakeOpenAI([reply("All checked, backups given.\nVerdict: 非常满意")]) as fake:
        llm = make_llm(fake.base_url)
        validator = Validator(facts=sandbox.facts(), tools=sandbox.tools, model=llm)
        try:
            a = await validator.assess(request="one more night", reply=longer.final_text or "", plan=longer.plan,
                                       messages=longer.messages, lang="en", now=NOW)
        finally:
            await llm.aclose()
        fake.assert_complete()
        user = str(fake.requests[0].messages[1]["content"])
    assert a.label is Label.EXCELLENT
    assert "## The request after the person's changes (grade against this)" in user
    assert "from Beijing to Shanghai; 2 travellers; leaving 2026-12-11, 2 nights" in user
    assert "nights 1 -> 2" in user


async def test_a_ride_the_person_refused_or_too_late_is_a_broken_constraint(sandbox: Sandbox, validator: Validator) -> None:
    """"No overnight trains and no hard seats": the cheapest plan home on the T40 (a 15-hour hard
    seat overnight) breaks both, the plan made after it neither; "a meeting at 2pm" is broken by a
    first ride that arrives after 13:00."""
    from agent_core.offline import OfflinePlanner

    planner = OfflinePlanner(sandbox.gazetteer)
    first = await drive(planner, sandbox.tools, "Beijing to Shanghai 12-14 March, two adults, budget 3000 yuan", lang="en")
    cheapest = await drive(planner, sandbox.tools, "the cheapest", lang="en", messages=list(first.messages))
    refused = "no overnight trains and no hard seats please"
    better = await drive(planner, sandbox.tools, refused, lang="en", messages=list(cheapest.messages))
    assert cheapest.plan is not None and better.plan is not None
    old = await grade(validator, cheapest.plan, better.messages, refused)
    broken = [f for f in old.report.findings if f.category is Category.CONSTRAINT] if old.report else []
    assert {f.item.split(" ")[:2] == ["legs[1]", "T40"] for f in broken} == {True}, old.report
    assert len(broken) == 2 and old.label not in GOOD
    assert (await grade(validator, better.plan, better.messages, refused)).label in GOOD

    meeting = "Wuhan to Shenzhen on Friday Dec 4 for a meeting at 2pm, one night"
    on_time = await drive(planner, sandbox.tools, meeting, lang="en")
    assert on_time.plan is not None and on_time.plan.legs[0].arrive <= "2026-12-04 13:00"
    assert (await grade(validator, on_time.plan, on_time.messages, meeting)).label in GOOD
    late = on_time.plan.model_copy(deep=True)
    late.legs[0].arrive = "2026-12-04 15:41"
    graded = await grade(validator, late, on_time.messages, meeting)
    assert any(f.category is Category.CONSTRAINT and f.item.startswith("legs[0]") for f in graded.report.findings), graded.report


@pytest.mark.parametrize(("request_text", "follow_up", "lang"), [
    ("Wuhan to Shenzhen on Friday Dec 4 for a meeting at 2pm, one night", "can we come back Sunday evening instead?", "en"),
    ("下周五从北京去上海玩三天，两个人", "第二天想去迪士尼", "zh"),
    ("下周五从北京去上海玩三天，两个人", "加一天", "zh"),
])
async def test_a_plan_made_after_a_change_of_days_passes(sandbox: Sandbox, validator: Validator, request_text: str,
                                                          follow_up: str, lang: str) -> None:
    """The Validator's own reading of the length follows the change: a day home said alone ("come
    back Sunday") makes the dates the length, "第二天" is a day of the trip, not a two-day trip."""
    from agent_core.offline import OfflinePlanner

    planner = OfflinePlanner(sandbox.gazetteer)
    first = await drive(planner, sandbox.tools, request_text, lang=lang)
    changed = await drive(planner, sandbox.tools, follow_up, lang=lang, messages=list(first.messages))
    assert changed.plan is not None, changed.final_text
    a = await validator.assess(request=follow_up, reply="", plan=changed.plan, messages=changed.messages, lang=lang, now=NOW)
    assert a.label in GOOD, a.report
