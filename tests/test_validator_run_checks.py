"""Issue 15 beyond the corpus: the live-data path reads every page (no false alarm on a busy line),
the "not graded" outcome and how surfaces show it, a plan written only as text (read and checked
by the reviewer, and the model asked once more to call submit_plan), and the bounds of leg physics."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date
from typing import Any

import pytest

from adapters.slack.render import verdict_block
from adapters.telegram.render import verdict_html
from adapters.web.render import verdict_data
from agent_core.events import AnswerReady, Verdict
from agent_core.memory import Memory
from agent_core.schema import Function, Message, Role, ToolCall
from agent_core.travel_agent import SUBMIT_AGAIN, TravelAgent
from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import read_constraints
from agent_core.validator.evidence import RunEvidence
from agent_core.validator.facts import RideFact
from agent_core.validator.findings import Category
from agent_core.validator.labels import Label
from agent_core.validator.physics import SPEED
from agent_core.validator.prose import read_text_plan
from agent_core.validator.tool_facts import ToolFacts
from agent_core.validator.validator import Validator
from bot.delivery.bodies import Audience, answer_body, answer_from_body
from bot.run.records import history_from_messages
from bot.run.review import PlanValidator, ReviewRequest
from tests.fakes.openai_server import FakeOpenAI, fault
from tests.spine_support import make_llm
from tests.validator_corpus.planted import load
from tests.validator_support import Sandbox, load_sandbox, run_clock
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import Leg, TripPlan
from tools.travel.factory import build_sandbox_tools

NOW = run_clock("2026-12-01")
ROUTES = {r["route"]: r for r in load()}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


def route(name: str) -> tuple[dict[str, Any], TripPlan, list[Message]]:
    r = ROUTES[name]
    return r, TripPlan.model_validate(r["plan"]), [Message.model_validate(m) for m in r["messages"]]


# -- the live-data path: every page is read ----------------------------------------------------
def small_pages(sandbox: Sandbox, size: int) -> ToolCollection:
    """The sandbox tools with search answers cut to `size` results, as a busy live line is."""
    tools = build_sandbox_tools(sandbox.gazetteer, sandbox.provider)
    for tool in tools:
        if tool.name in ("train_search", "flight_search"):
            tool._limit = size  # type: ignore[attr-defined]
    return ToolCollection(tools)


@pytest.mark.parametrize("name", ["hz_bj", "wh_cq", "bj_sy_flight", "sh_qd_flight"])
async def test_a_correct_plan_is_not_flagged_when_pages_are_short(name: str, sandbox: Sandbox) -> None:
    r, plan, messages = route(name)
    facts = ToolFacts(small_pages(sandbox, 2), sandbox.gazetteer, lambda: NOW)
    report = await PlanChecker(facts).check(plan, read_constraints([r["request"]], NOW.date()),
                                            evidence=RunEvidence.from_messages(messages), text=r["text"])
    assert report.ok, [f.line() for f in report.findings]


async def test_a_later_train_that_falls_off_the_first_page_is_found(sandbox: Sandbox) -> None:
    """wh_cq's way home, G6808 at 15:05 Chongqing North -> Wuhan: 37 trains leave from 14:05 on."""
    _r, plan, _messages = route("wh_cq")
    leg = plan.legs[-1]
    assert (leg.number, leg.depart) == ("G6808", "2027-04-09 15:05")
    tools = small_pages(sandbox, 2)
    args = {"depart_station": leg.origin, "arrive_station": leg.destination, "depart_date": "2027-04-09", "is_transfer": 0,
            "depart_time_earliest": "2027-04-09 14:05"}
    page = json.loads((await tools.execute("train_search", args, ToolContext(tool_call_id="t", now=NOW))).output)
    assert page["matched"] > page["shown"] and "G6808" not in [x["number"] for x in page["results"]]  # the old search missed it
    found = await ToolFacts(tools, sandbox.gazetteer, lambda: NOW).ride("train", "G6808", "2027-04-09", leg.origin, leg.destination, leg.depart)
    assert isinstance(found, RideFact) and (found.depart, found.arrive) == (leg.depart, leg.arrive)


async def test_an_invented_ride_is_still_missing_after_every_page(sandbox: Sandbox) -> None:
    r, plan, _messages = route("hz_bj")
    plan.legs[0].number = "G9989"
    facts = ToolFacts(small_pages(sandbox, 2), sandbox.gazetteer, lambda: NOW)
    report = await PlanChecker(facts).check(plan, read_constraints([r["request"]], NOW.date()))
    assert any(f.category is Category.FACT and "G9989" in f.item and "G7648" in f.evidence.render("en") for f in report.findings)


# -- "not graded" ---------------------------------------------------------------------------------
NOTHING = "你好！告诉我你想什么时候去哪里，我来帮你规划行程。"


async def test_nothing_checked_and_no_rubric_model_is_not_graded(sandbox: Sandbox) -> None:
    v = Validator(facts=sandbox.facts(), tools=sandbox.tools, model=None)
    found = await v.assess(request="你好", reply=NOTHING, plan=None, messages=[Message.user("你好")], lang="zh", now=NOW)
    assert found.label is None and not found.graded and found.report is None and not found.unsatisfied


async def test_nothing_checked_and_a_failed_rubric_is_not_graded(sandbox: Sandbox) -> None:
    async with FakeOpenAI([fault(400, message="bad request")]) as fake:
        v = Validator(facts=sandbox.facts(), tools=sandbox.tools, model=make_llm(fake.base_url))
        found = await v.assess(request="你好", reply=NOTHING, plan=None, messages=[Message.user("你好")], lang="zh", now=NOW)
    assert found.label is None and found.rubric_error is not None


def review(text: str, plan: TripPlan | None, messages: list[Message], request: str, lang: str = "zh") -> ReviewRequest:
    return ReviewRequest("s", lang, request, AnswerReady(text, plan), messages, 0)


async def test_the_reviewer_says_not_graded_and_surfaces_show_it(sandbox: Sandbox) -> None:
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None, clock=lambda: NOW)
    outcome = await reviewer.review(review(NOTHING, None, [Message.user("你好")], "你好"))
    verdict = outcome.verdict
    assert verdict is not None and not verdict.graded and outcome.replan_feedback is None
    assert verdict.label == verdict.label_en == "" and verdict.reasons and "没有可核对" in verdict.reasons[0]
    assert all(verdict.label != lab.zh for lab in Label)  # not a seventh label
    assert "未评分" in verdict_html(verdict, "zh") and "not graded" in verdict_html(verdict, "en")
    assert "not graded" in json.dumps(verdict_block(verdict, "en"))
    assert verdict_data(verdict).graded is False
    _answer, back = answer_from_body(answer_body(AnswerReady(NOTHING), verdict, Audience("en"), 1))
    assert back is not None and not back.graded  # the outbox keeps the outcome across a restart
    graded = Verdict("非常满意", "Very satisfied")
    assert graded.graded and "Very satisfied" in verdict_html(graded, "en")


# -- a plan written only as text -------------------------------------------------------------------
async def test_a_text_plan_is_read_and_checked_by_the_reviewer(sandbox: Sandbox) -> None:
    r, _plan, messages = route("hz_bj")
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=None, clock=lambda: NOW)
    clean = (await reviewer.review(review(r["text"], None, messages, r["request"]))).verdict
    assert clean is not None and clean.graded and clean.label in (Label.EXCELLENT.zh, Label.NO_CONTINGENCY.zh)
    assert any("从文字中读出" in x for x in clean.reasons)
    invented = r["text"].replace("G7648", "G9989")
    outcome = await reviewer.review(review(invented, None, messages, r["request"]))
    assert outcome.verdict is not None and outcome.verdict.label == Label.NOT_TRUE.zh
    assert any("G9989" in x for x in outcome.verdict.failed_checks)
    assert outcome.replan_feedback is not None and "submit_plan" in outcome.replan_feedback


def test_the_text_reader_keeps_to_rides_hotels_times_and_prices() -> None:
    text = ("第一天：乘坐 G7648（杭州东 08:10 → 北京南 13:05，二等座 590.5元），入住7天连锁酒店(北京国家博物馆店)，每晚234元；"
            "在首都机场T3航站楼集合，坐地铁2号线。\n备选：D3037 04-23 15:05 厦门北 → 18:26 广州南（194.5元起）\n"
            "推荐附近的经济型酒店。Take CZ5420 at 09:40, stay at Grand Lotus Hotel (¥800/night).")
    read = read_text_plan(text, date(2027, 1, 1))
    rides = {r.number: r for r in read.rides}
    assert set(rides) == {"G7648", "D3037", "CZ5420"}  # not T3 (a terminal) nor 2 (a metro line)
    assert rides["G7648"].times == ("08:10", "13:05") and rides["G7648"].prices == (590.5,) and rides["G7648"].seat == "二等座"
    assert rides["D3037"].day == date(2027, 4, 23) and rides["D3037"].times == ("15:05", "18:26")
    assert rides["CZ5420"].kind == "flight" and rides["CZ5420"].times == ("09:40",)
    hotels = {h.name: h for h in read.hotels}
    assert set(hotels) == {"7天连锁酒店(北京国家博物馆店)", "Grand Lotus Hotel"}  # not 附近的经济型酒店
    assert hotels["7天连锁酒店(北京国家博物馆店)"].prices == (234.0,) and hotels["Grand Lotus Hotel"].prices == (800.0,)


class Script:
    """A model that plays back replies (its name marks it as a test double)."""

    name = "script"

    def __init__(self, replies: list[Message]) -> None:
        self.replies = replies
        self.seen: list[list[Message]] = []

    async def ask_tool(self, messages: Sequence[Message], **_: Any) -> Message:
        self.seen.append(list(messages))
        return self.replies.pop(0)


def searched(name: str) -> list[Message]:
    """The offline planner's conversation up to its submit_plan: the request and every search."""
    messages = [Message.model_validate(m) for m in ROUTES[name]["messages"]]
    cut = next(i for i, m in enumerate(messages) if any(tc.function.name == "submit_plan" for tc in m.tool_calls or ()))
    return messages[:cut]


def agent(sandbox: Sandbox, script: Script, messages: list[Message]) -> TravelAgent:
    return TravelAgent(model=script, tools=sandbox.tools, system_prompt="plan trips", memory=Memory(messages),
                       context=ToolContext(tool_call_id="", now=NOW, lang="zh"), max_steps=8)


async def answer_of(a: TravelAgent) -> AnswerReady:
    answers = [e async for e in a.run() if isinstance(e, AnswerReady)]
    assert len(answers) == 1
    return answers[0]


def submit(plan: dict[str, Any], text: str) -> Message:
    call = ToolCall(id="call_submit", function=Function(name="submit_plan", arguments=json.dumps(
        {"summary": text, "plan": plan}, ensure_ascii=False)))
    return Message.assistant(None, [call])


async def test_a_plan_written_as_text_is_asked_for_once_more_as_submit_plan(sandbox: Sandbox) -> None:
    r = ROUTES["hz_bj"]
    script = Script([Message.assistant(r["text"]), submit(r["plan"], r["text"])])
    a = agent(sandbox, script, searched("hz_bj"))
    answer = await answer_of(a)
    assert answer.plan is not None and answer.plan.legs[0].number == "G7648"
    asked = [m for m in a.memory.messages if m.role is Role.USER and (m.content or "").startswith(SUBMIT_AGAIN)]
    assert len(asked) == 1 and script.seen[1][-1] == asked[0] and r["text"] in (asked[0].content or "")  # the draft is quoted
    assert not any(m.role is Role.ASSISTANT and m.content == r["text"] for m in a.memory.messages)  # and not kept as a reply
    assert SUBMIT_AGAIN.startswith("[review]")  # hidden from the person's history and from their constraints
    assert all(not h.text.startswith("[review]") for h in history_from_messages(a.memory.messages))


async def test_asked_once_only_and_never_for_a_reply_that_is_not_a_plan(sandbox: Sandbox) -> None:
    r = ROUTES["hz_bj"]
    twice = Script([Message.assistant(r["text"]), Message.assistant(r["text"])])
    answer = await answer_of(agent(sandbox, twice, searched("hz_bj")))
    assert answer.plan is None and "G7648" in answer.text and not twice.replies  # taken at its word the second time
    chat = Script([Message.assistant(NOTHING)])
    assert (await answer_of(agent(sandbox, chat, searched("hz_bj")))).text == NOTHING and len(chat.seen) == 1
    unsearched = Script([Message.assistant(r["text"])])  # nothing searched: no results to build a plan from
    assert (await answer_of(agent(sandbox, unsearched, [Message.user(r["request"])]))).plan is None and len(unsearched.seen) == 1


# -- the bounds of leg physics ---------------------------------------------------------------------
async def test_speed_bounds_hold_legs_without_a_timetable(sandbox: Sandbox) -> None:
    r, plan, _ = route("hz_bj")

    def with_leg(kind: str, origin: str, destination: str, depart: str, arrive: str) -> TripPlan:
        p = plan.model_copy(deep=True)
        p.legs.insert(1, Leg(kind=kind, origin=origin, destination=destination, origin_city="北京", destination_city="北京",  # type: ignore[arg-type]
                             depart=depart, arrive=arrive))
        return p

    checker = PlanChecker(sandbox.facts())
    constraints = read_constraints([r["request"]], NOW.date())
    # 北京南 -> 八达岭长城 is about 60 km in a straight line
    fine = await checker.check(with_leg("taxi", "北京南", "八达岭长城", "2027-03-10 13:20", "2027-03-10 14:40"), constraints)
    assert fine.ok, [f.line() for f in fine.findings]
    fast = await checker.check(with_leg("taxi", "北京南", "八达岭长城", "2027-03-10 13:20", "2027-03-10 13:35"), constraints)
    assert [f.problem.key for f in fast.findings] == ["leg.too_fast"]
    walk = await checker.check(with_leg("walk", "北京南", "八达岭长城", "2027-03-10 13:20", "2027-03-10 14:30"), constraints)
    assert [f.problem.key for f in walk.findings] == ["leg.too_fast"]
    assert SPEED["taxi"].upper == 120 and SPEED["train"].upper == 350 and SPEED["flight"].upper == 1000


async def test_an_english_reply_that_translates_names_is_not_flagged(sandbox: Sandbox) -> None:
    r, _plan, messages = route("hz_bj")
    text = ("Day 1 (March 10): take train G7648 from Hangzhou East at 08:10, arriving Beijing South at 13:05 "
            "(second class, ¥590.5). Check in at the 7 Days Inn near the National Museum.\n"
            "Day 3: G5329 leaves Beijing South at 15:45 and reaches Hangzhou East at 20:32.")
    report, read = await PlanChecker(sandbox.facts()).check_text(text, read_constraints([r["request"]], NOW.date()),
                                                                 RunEvidence.from_messages(messages), NOW.date())
    assert [x.number for x in read.rides] == ["G7648", "G5329"] and report.ok, [f.line() for f in report.findings]
    wrong = text.replace("20:32", "21:32")
    report, _ = await PlanChecker(sandbox.facts()).check_text(wrong, read_constraints([r["request"]], NOW.date()),
                                                              RunEvidence.from_messages(messages), NOW.date())
    assert [f.item for f in report.findings] == ["reply: G5329"]
