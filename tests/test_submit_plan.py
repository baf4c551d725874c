"""submit_plan: a sound plan ends the run with text and plan; a bad one is an error the model can fix."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import TripPlan
from tools.submit_plan import SubmitPlan, plan_problems

CTX = ToolContext(tool_call_id="call_1", now=datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai")))


def _plan(**overrides: Any) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "title": "北京-上海 2天",
        "origin_city": "北京",
        "destination_city": "上海",
        "start_date": "2026-12-11",
        "end_date": "2026-12-12",
        "legs": [
            {"kind": "train", "number": "G1", "origin": "北京南", "destination": "上海虹桥",
             "depart": "2026-12-11 07:00", "arrive": "2026-12-11 11:30", "price": 662},
            {"kind": "train", "number": "G2", "origin": "上海虹桥", "destination": "北京南",
             "depart": "2026-12-12 17:00", "arrive": "2026-12-12 21:30", "price": 662},
        ],
        "stays": [{"hotel_id": "H1", "name": "某酒店", "city": "上海", "checkin_date": "2026-12-11",
                   "checkout_date": "2026-12-12", "nights": 1, "price_per_night": 500, "total": 500}],
        "visits": [{"poi_id": "P1", "name": "外滩", "city": "上海", "date": "2026-12-11", "ticket_price": 0},
                   {"poi_id": "P2", "name": "东方明珠", "city": "上海", "date": "2026-12-12", "ticket_price": 199}],
        "total_cost": 2023,
        "notes": ["沙盒数据"],
    }
    plan.update(overrides)
    return plan


def _args(plan: dict[str, Any], summary: str = "<answer>行程如下</answer>") -> str:
    return json.dumps({"summary": summary, "plan": plan}, ensure_ascii=False)


async def test_sound_plan_ends_run_with_text_and_plan() -> None:
    tools = ToolCollection([SubmitPlan()])
    result = await tools.execute("submit_plan", _args(_plan()), CTX)
    assert result.ok, result.error
    assert result.ends_run
    assert result.final_text == "行程如下"
    assert isinstance(result.plan, TripPlan)
    assert result.plan.legs[0].number == "G1"
    assert "2023" in result.output


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"total_cost": 100}, "total_cost 100 is not the sum"),
        ({"end_date": "2026-12-10"}, "is before start_date"),
        ({"start_date": "next friday"}, "not a date in the form YYYY-MM-DD"),
    ],
)
async def test_bad_plan_is_an_error_and_run_goes_on(overrides: dict[str, Any], fragment: str) -> None:
    tools = ToolCollection([SubmitPlan()])
    result = await tools.execute("submit_plan", _args(_plan(**overrides)), CTX)
    assert not result.ok
    assert not result.ends_run
    assert fragment in (result.error or "")
    assert result.observation().startswith("Error: the plan was not accepted")


async def test_stay_nights_and_totals_are_checked() -> None:
    stay = {"hotel_id": "H1", "name": "x", "city": "上海", "checkin_date": "2026-12-11",
            "checkout_date": "2026-12-11", "nights": 2, "price_per_night": 500, "total": 700}
    problems = plan_problems(TripPlan.model_validate(_plan(stays=[stay], total_cost=2223)))
    text = " | ".join(problems)
    assert "not after checkin" in text
    assert "is not nights x price_per_night" in text


async def test_schema_errors_name_the_field() -> None:
    tools = ToolCollection([SubmitPlan()])
    broken = _plan()
    del broken["legs"][0]["depart"]
    result = await tools.execute("submit_plan", _args(broken), CTX)
    assert not result.ok
    assert "plan.legs.0.depart: required field is missing" in (result.error or "")
    blank = await tools.execute("submit_plan", _args(_plan(), summary="<answer> </answer>"), CTX)
    assert "summary" in (blank.error or "")


async def test_train_leg_without_number_is_refused() -> None:
    plan = _plan()
    plan["legs"][0]["number"] = None
    assert any("without its number" in p for p in plan_problems(TripPlan.model_validate(plan)))


def test_tool_description_is_an_openai_function() -> None:
    param = SubmitPlan().to_param()
    assert param["function"]["name"] == "submit_plan"
    assert set(param["function"]["parameters"]["required"]) == {"summary", "plan"}
