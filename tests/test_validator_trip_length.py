"""The Validator reads the requested length on its own (agent_core/validator/trip_length.py): a
plan whose dates span a different number of nights never gets the best verdict, even when the
planner's own reading of the request is wrong."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

import agent_core.validator.constraints as constraints_module
from agent_core.schema import Message
from agent_core.validator.labels import Label
from agent_core.validator.trip_length import read_length, requested_length, run_texts
from agent_core.validator.validator import Validator
from tests.validator_support import load_sandbox, offline_plan

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai"))


@pytest.mark.parametrize(
    ("text", "nights"),
    [
        ("Plan a 3-day trip from Beijing to Shanghai", 2),
        ("3 day trip from Beijing to Shanghai", 2),
        ("three days in Shanghai", 2),
        ("a long weekend in Shanghai", 2),
        ("北京到上海3天", 2),
        ("北京到上海三天两晚", 2),
        ("去上海住两晚", 2),
        ("a day trip to Tianjin", 0),
        ("Shanghai for 4 nights", 4),
        ("两周", 13),
        ("2027年3月5日从北京去上海玩3天", 2),
    ],
)
def test_the_lengths_people_write(text: str, nights: int) -> None:
    found = read_length(text)
    assert found is not None and found.nights == nights, (text, found)


@pytest.mark.parametrize("text", ["leave in 3 days", "3天后出发", "3月5日出发", "三月五日", "12月15日", "3 days from now", "Beijing to Shanghai", "晚上出发"])
def test_dates_and_times_are_not_lengths(text: str) -> None:
    assert read_length(text) is None


def test_only_this_runs_texts_count_and_the_last_length_wins() -> None:
    messages = [Message.user("Beijing to Shanghai for 3 days"), Message.assistant("<answer>plan</answer>"),
                Message.user("Now Beijing to Hangzhou"), Message.user("make it 2 nights")]
    texts = run_texts("Now Beijing to Hangzhou", messages)
    assert texts == ["Now Beijing to Hangzhou", "make it 2 nights"]
    assert requested_length(texts).nights == 2  # type: ignore[union-attr]
    assert requested_length(["Now Beijing to Hangzhou"]) is None


async def test_a_plan_shorter_than_asked_is_not_graded_the_best_even_if_the_planner_misread_it(monkeypatch) -> None:
    sandbox = load_sandbox()
    same_day = await offline_plan(sandbox, "Beijing to Shanghai, a day trip, 2026-12-05", NOW)
    assert same_day is not None and same_day.start_date == same_day.end_date
    validator = Validator(facts=sandbox.facts(), tools=sandbox.tools, model=None)
    request = "Plan a 3-day trip from Beijing to Shanghai, leaving 2026-12-05"

    # the planner's reader (which read_constraints shares) misreads the length as a day trip,
    # as it once did: the plan agrees with it, and only the independent reading catches it
    real = constraints_module.read_wishes

    def misread(text, today):  # type: ignore[no-untyped-def]
        from dataclasses import replace

        return replace(real(text, today), days=1, nights=0)

    monkeypatch.setattr(constraints_module, "read_wishes", misread)
    assessed = await validator.assess(request=request, reply="", plan=same_day, messages=[Message.user(request)],
                                      lang="en", now=NOW)
    assert assessed.label is not Label.EXCELLENT
    assert assessed.label is Label.NEED_UNMET
    assert any("3-day" in f.line("en") for f in assessed.report.findings)  # type: ignore[union-attr]

    monkeypatch.setattr(constraints_module, "read_wishes", real)
    three_days = await offline_plan(sandbox, request, NOW)
    assert three_days is not None and (three_days.start_date, three_days.end_date) == ("2026-12-05", "2026-12-07")
    assessed = await validator.assess(request=request, reply="", plan=three_days, messages=[Message.user(request)],
                                      lang="en", now=NOW)
    assert assessed.label is Label.EXCELLENT, assessed.report
