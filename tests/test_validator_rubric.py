"""The rubric pass with a scripted model over HTTP (the fake OpenAI server): native tool calls
and the text format, the input it is given, the cap set by failed checks, and a model that fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_core.validator.labels import Label
from agent_core.validator.validator import Validator
from tests.fakes.openai_server import FakeOpenAI, call, fault, reply
from tests.spine_support import make_llm
from tests.validator_support import Sandbox, grounded_messages, load_sandbox, run_clock
from tools.plan import TripPlan

CORPUS = Path(__file__).parent / "validator_corpus"
NOW = run_clock("2026-12-01")


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


def entry(name: str) -> dict[str, Any]:
    return json.loads((CORPUS / f"{name}.json").read_text(encoding="utf-8"))


async def assess(sandbox: Sandbox, fake: FakeOpenAI, name: str, reply_text: str = "<think>draft</think>行程如下") -> Any:
    """The planner's conversation is the offline planner's run for the request: the plan's items
    come from its tool results."""
    e = entry(name)
    plan = TripPlan.model_validate(e["plan"])
    validator = Validator(facts=sandbox.facts(), tools=sandbox.tools, model=make_llm(fake.base_url))
    return await validator.assess(
        request=e["request"], reply=reply_text, plan=plan,
        messages=await grounded_messages(sandbox, e["request"], plan, NOW), lang="zh", now=NOW,
    )


async def test_native_tool_calls_then_verdict(sandbox: Sandbox) -> None:
    script = [
        reply(tool_calls=[call("train_search", {"depart_station": "北京南", "arrive_station": "上海虹桥",
                                                "depart_date": "2027-03-05", "is_transfer": 0}, id="v1")]),
        reply("1. 车次 G1710 与查询一致。\n2. 有备选方案。\n结论：非常满意"),
    ]
    async with FakeOpenAI(script) as fake:
        found = await assess(sandbox, fake, "ok_bj_sh_train")
        fake.assert_complete()
        first, second = fake.requests
    assert found.label is Label.EXCELLENT and not found.rubric_skipped
    assert found.rubric is not None and found.rubric.tool_calls == 1
    assert "车次 G1710 与查询一致。" in found.rubric.reasons
    assert not {"ask_human", "submit_plan", "terminate"} & set(first.tool_names())
    assert {"train_search", "hotel_search", "poi_search", "route_plan"} <= set(first.tool_names())
    system, user = first.messages[0]["content"], first.messages[1]["content"]
    assert "非常满意但未应对突发情况" in system and "<TOOL_BEGIN>" in system
    # the input as the original assembled it: request, reply without reasoning, reference info
    assert user.index("## 用户的问题") < user.index("## 待评估的回复") < user.index("## 参考信息")
    assert "从北京去上海玩3天" in user and "行程如下" in user and "draft" not in user
    assert "[1] train_search" in user and '"number": "G1710"' in user
    assert "全部通过" in user  # the automatic checks are shown to the model
    assert "G1710" in second.tool_results()["v1"]  # the re-query really ran on the sandbox


async def test_text_format_tool_calls_are_run(sandbox: Sandbox) -> None:
    text_call = ('我先核对车次。\n<TOOL_BEGIN>\n<tool_call>train_search(depart_station="北京南", arrive_station="上海虹桥", '
                 'depart_date="2027-03-05", is_transfer=0)</tool_call>\n'
                 '<tool_call>hotel_search(city_name="上海", checkin_date="2027-03-05", checkout_date="2027-03-07")</tool_call>\n<TOOL_END>')
    script = [reply(text_call), reply("核对完毕，时间衔接合理，但没有天气备选。\n结论: 非常满意, 但未应对突发情况")]
    async with FakeOpenAI(script) as fake:
        found = await assess(sandbox, fake, "ok_bj_sh_train")
        fake.assert_complete()
        results = fake.requests[1].tool_results()
    assert found.rubric is not None and found.rubric.tool_calls == 2
    assert len(results) == 2 and all(not r.startswith("Error") for r in results.values())
    assert found.label is Label.NO_CONTINGENCY


async def test_failed_check_caps_a_generous_rubric(sandbox: Sandbox) -> None:
    async with FakeOpenAI([reply("看起来都很好。\n结论：非常满意")]) as fake:
        found = await assess(sandbox, fake, "no_such_ride_bj_sh_train")
        user = fake.requests[0].messages[1]["content"]
    assert found.rubric is not None and found.rubric.label is Label.EXCELLENT
    assert found.label is Label.NOT_TRUE  # the check's cap wins
    assert "G9999" in user and "信息不真实" in user  # the model was told what failed


async def test_model_failure_falls_back_to_the_checks(sandbox: Sandbox) -> None:
    async with FakeOpenAI([fault(400, message="bad request")]) as fake:
        found = await assess(sandbox, fake, "wrong_departure_time_bj_sh_train")
    assert found.rubric is None and found.rubric_skipped and found.rubric_error is not None
    assert found.label is Label.NOT_TRUE


async def test_reply_without_a_label_is_not_a_verdict(sandbox: Sandbox) -> None:
    async with FakeOpenAI([reply("I am not sure.")]) as fake:
        found = await assess(sandbox, fake, "ok_bj_sh_train")
    assert found.rubric_skipped and found.rubric_error is not None and found.rubric_error.reason == "no_label"
    assert found.label in (Label.EXCELLENT, Label.NO_CONTINGENCY)
