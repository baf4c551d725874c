"""The re-plan loop end to end through the real runtime: a planted hallucination is caught and
re-planned before the person sees it (scripted model), the offline planner's plans carry a
checks-only verdict, rounds run out honestly, and BOT_VALIDATE=off skips it all."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from adapters.runtime import Runtime, build_runtime
from agent_core.events import AnswerReady, Verdict
from agent_core.llm import LLM
from agent_core.model import ChatModel
from agent_core.offline.planner import OfflinePlanner
from agent_core.prompts.travel import build_system_prompt
from agent_core.validator.provider_facts import ProviderFacts
from agent_core.validator.tool_facts import ToolFacts
from bot.run.review import PlanValidator, build_plan_validator
from bot.surface import ChatKey
from tests.fakes.openai_server import FakeOpenAI, call, reply
from tests.spine_support import Posted, RecordingSurface, make_llm, make_settings, msg
from tests.validator_support import (
    Sandbox,
    grounded_messages,
    load_sandbox,
    run_clock,
    search_calls,
)
from tools.base import BaseTool, ToolContext, ToolResult
from tools.collection import ToolCollection
from tools.plan import TripPlan

CORPUS = Path(__file__).parent / "validator_corpus"
CHAT = ChatKey("test", "trip")
REQUEST = "2027年3月5日从北京去上海玩3天"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


def plan_of(name: str) -> dict[str, Any]:
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))["plan"]


def role_key(messages: list[dict[str, Any]]) -> str:
    system = str(messages[0].get("content")) if messages and messages[0].get("role") == "system" else ""
    return "validator" if "行程评审员" in system or "You review the reply" in system else "planner"


async def start(tmp_path: Path, sandbox: Sandbox, model: ChatModel, rubric: LLM | None, surface: RecordingSurface, **settings: Any) -> Runtime:
    values = {"validate_plans": True, **settings}
    reviewer = PlanValidator(facts=sandbox.facts(), tools=sandbox.tools, rubric_model=rubric)
    runtime = build_runtime(
        make_settings(tmp_path, **values), model=model, tools=sandbox.tools, prompt=build_system_prompt,
        reviewer=reviewer, serve_http=False, extra_surfaces=[surface],
    )
    await runtime.start()
    return runtime


def answers(surface: RecordingSurface) -> list[Posted]:
    return [p for p in surface.posted if p.kind == "answer"]


def submit(name: str) -> Any:
    return call("submit_plan", {"summary": f"行程：{name}", "plan": plan_of(name)})



async def searches_for(sandbox: Sandbox, request: str, name: str) -> Any:
    """The searches behind the corpus plan `name`: a scripted planner that makes them has every
    item of that plan in its run's tool results."""
    plan = TripPlan.model_validate(plan_of(name))
    messages = await grounded_messages(sandbox, request, plan, run_clock("2026-12-01"))
    return reply(tool_calls=[call(tool, args) for tool, args in search_calls(messages)])


async def test_planted_hallucination_is_replanned_before_the_person_sees_it(tmp_path: Path, sandbox: Sandbox) -> None:
    scripts = {
        "planner": [await searches_for(sandbox, REQUEST, "ok_bj_sh_train"), reply(tool_calls=[submit("no_such_ride_bj_sh_train")]),
                    reply(tool_calls=[submit("ok_bj_sh_train")])],
        "validator": [reply("G9999 在车次查询里不存在。\n结论：不满意，信息不真实"),
                      reply("车次、酒店、景点都已核对，有备选方案。\n结论：非常满意")],
    }
    surface = RecordingSurface()
    async with FakeOpenAI(scripts=scripts, keyer=role_key) as fake:
        llm = make_llm(fake.base_url)
        rt = await start(tmp_path, sandbox, llm, llm, surface)
        try:
            await rt.manager.submit(msg(CHAT, REQUEST, dedup="1"))
            await surface.wait_count("answer", 1, timeout=20)
            await rt.manager.wait_until_idle(CHAT, 5)
            session = await rt.store.get_session(str(CHAT))
        finally:
            await rt.stop()
        fake.assert_complete()
        replan = fake.served("planner")[2]
    assert session is not None and session.llm_calls == 5  # the two rubric calls count with the planner's three
    posted = answers(surface)
    assert len(posted) == 1
    answer, verdict = posted[0].payload, posted[0].verdict
    assert isinstance(answer, AnswerReady) and answer.plan is not None
    assert answer.plan.legs[0].number == "G1710"
    assert isinstance(verdict, Verdict) and verdict.label == "非常满意" and verdict.rounds == 2
    assert not verdict.rubric_skipped and not verdict.failed_checks
    review = [m["content"] for m in replan.messages if m["role"] == "user" and str(m["content"]).startswith("[review]")]
    assert len(review) == 1 and "G9999" in review[0] and "信息不真实" in review[0]
    assert all("G9999" not in str(p.payload) for p in surface.posted if p.kind in ("answer", "notice"))


async def test_rounds_run_out_and_the_remaining_issues_are_posted(tmp_path: Path, sandbox: Sandbox) -> None:
    scripts = {
        "planner": [reply(tool_calls=[submit("no_such_ride_bj_sh_train")]),
                    reply(tool_calls=[submit("wrong_departure_time_bj_sh_train")])],
        "validator": [reply("结论：不满意，信息不真实"), reply("结论：不满意，信息不真实")],
    }
    surface = RecordingSurface()
    async with FakeOpenAI(scripts=scripts, keyer=role_key) as fake:
        llm = make_llm(fake.base_url)
        rt = await start(tmp_path, sandbox, llm, llm, surface, validate_rounds=1)
        try:
            await rt.manager.submit(msg(CHAT, REQUEST, dedup="1"))
            await surface.wait_count("answer", 1, timeout=20)
        finally:
            await rt.stop()
        fake.assert_complete()
    verdict = answers(surface)[0].verdict
    assert verdict is not None and verdict.label == "不满意,信息不真实" and verdict.rounds == 2
    assert any("06:58" in f and "07:35" in f for f in verdict.failed_checks)


async def test_a_replan_that_changes_nothing_is_not_reviewed_again(tmp_path: Path, sandbox: Sandbox) -> None:
    """The planner answers the review with the very plan it was sent back for: the rounds left
    are not spent on it (no second review, no third plan); it is posted with the review it had."""
    scripts = {
        "planner": [reply(tool_calls=[submit("wrong_departure_time_bj_sh_train")]),
                    reply(tool_calls=[submit("wrong_departure_time_bj_sh_train")])],
        "validator": [reply("结论：不满意，信息不真实")],
    }
    surface = RecordingSurface()
    async with FakeOpenAI(scripts=scripts, keyer=role_key) as fake:
        llm = make_llm(fake.base_url)
        rt = await start(tmp_path, sandbox, llm, llm, surface, validate_rounds=3)
        try:
            await rt.manager.submit(msg(CHAT, REQUEST, dedup="1"))
            await surface.wait_count("answer", 1, timeout=20)
        finally:
            await rt.stop()
        fake.assert_complete()  # two plans and one review: nothing more was asked of either model
        assert len(fake.served("planner")) == 2 and len(fake.served("validator")) == 1
    verdict = answers(surface)[0].verdict
    assert verdict is not None and verdict.label == "不满意,信息不真实" and verdict.rounds == 1
    assert any("06:58" in f and "07:35" in f for f in verdict.failed_checks)


async def test_offline_planner_gets_a_checks_only_verdict(tmp_path: Path, sandbox: Sandbox) -> None:
    surface = RecordingSurface()
    rt = await start(tmp_path, sandbox, OfflinePlanner(sandbox.gazetteer), None, surface)
    try:
        await rt.manager.submit(msg(CHAT, REQUEST, dedup="1"))
        await surface.wait_count("answer", 1, timeout=20)
    finally:
        await rt.stop()
    posted = answers(surface)[0]
    assert posted.payload.plan is not None
    verdict = posted.verdict
    assert verdict is not None and verdict.rubric_skipped and verdict.rounds == 1
    assert verdict.label in ("非常满意", "非常满意但未应对突发情况") and not verdict.failed_checks
    assert any("未做模型评审" in r for r in verdict.reasons)


async def test_validation_off_posts_without_a_verdict(tmp_path: Path, sandbox: Sandbox) -> None:
    surface = RecordingSurface()
    rt = await start(tmp_path, sandbox, OfflinePlanner(sandbox.gazetteer), None, surface, validate_plans=False)
    try:
        await rt.manager.submit(msg(CHAT, REQUEST, dedup="1"))
        await surface.wait_count("answer", 1, timeout=20)
    finally:
        await rt.stop()
    assert answers(surface)[0].verdict is None


class StaleTrainSearch(BaseTool[BaseModel]):
    """The real train_search whose first answer is stale: every arrival 20 minutes early (as a
    cached timetable would be). The planner builds on it; the Validator re-queries the truth."""

    name = "train_search"

    def __init__(self, real: BaseTool[Any]) -> None:
        self.real = real
        self.description = real.description  # type: ignore[misc]
        self.params_model = real.params_model  # type: ignore[misc]
        self.calls = 0

    async def execute(self, params: BaseModel, ctx: ToolContext) -> ToolResult:
        result = await self.real.execute(params, ctx)
        self.calls += 1
        if self.calls == 1 and result.ok:
            data = json.loads(result.output)
            for train in data.get("results", []):
                arrive = datetime.strptime(train["arrive"], "%Y-%m-%d %H:%M") - timedelta(minutes=20)
                train["arrive"] = arrive.strftime("%Y-%m-%d %H:%M")
            result.output = json.dumps(data, ensure_ascii=False)
        return result


async def test_offline_planner_replans_after_a_failed_check(tmp_path: Path, sandbox: Sandbox) -> None:
    real = sandbox.tools.get("train_search")
    assert real is not None
    stale = StaleTrainSearch(real)
    tools = ToolCollection([stale if t.name == "train_search" else t for t in sandbox.tools])
    surface = RecordingSurface()
    reviewer = PlanValidator(facts=sandbox.facts(), tools=tools, rubric_model=None)
    rt = build_runtime(
        make_settings(tmp_path, validate_plans=True), model=OfflinePlanner(sandbox.gazetteer), tools=tools,
        prompt=build_system_prompt, reviewer=reviewer, serve_http=False, extra_surfaces=[surface],
    )
    await rt.start()
    try:
        await rt.manager.submit(msg(CHAT, REQUEST, dedup="1"))
        await surface.wait_count("answer", 1, timeout=20)
        history = await rt.manager.history(CHAT)
    finally:
        await rt.stop()
    posted = answers(surface)
    assert len(posted) == 1 and stale.calls >= 3  # searched again after the review
    verdict = posted[0].verdict
    assert verdict is not None and verdict.rounds == 2, verdict
    assert verdict.label in ("非常满意", "非常满意但未应对突发情况") and not verdict.failed_checks
    assert all(not h.text.startswith("[review]") for h in history)  # the person never sees the review note


def test_build_plan_validator_picks_the_fact_source_and_the_rubric_model(tmp_path: Path, sandbox: Sandbox) -> None:
    offline = OfflinePlanner(sandbox.gazetteer)
    v = build_plan_validator(make_settings(tmp_path, openai_api_key=None), gazetteer=sandbox.gazetteer, model=offline,
                             tools=sandbox.tools, sandbox=sandbox.provider)
    assert isinstance(v.validator.checker.facts, ProviderFacts) and v.validator.model is None
    llm = make_llm("http://127.0.0.1:9/v1")
    live = build_plan_validator(make_settings(tmp_path, travel_data="live"), gazetteer=sandbox.gazetteer, model=llm,
                                tools=sandbox.tools, sandbox=sandbox.provider)
    assert isinstance(live.validator.checker.facts, ToolFacts) and live.validator.model is llm
