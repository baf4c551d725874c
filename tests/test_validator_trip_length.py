"""The Validator reads the requested length on its own (agent_core/validator/trip_length.py): a
plan whose dates span a different number of nights never gets the best verdict, even when the
planner's own reading of the request is wrong."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from agent_core.offline.places import PlaceReader
from agent_core.schema import Message
from agent_core.validator.constraints import request_state
from agent_core.validator.labels import Label
from agent_core.validator.trip_length import length_in, read_length, requested_length
from agent_core.validator.validator import Validator
from tests.validator_support import load_sandbox, offline_run

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


def test_only_this_trips_texts_count_and_the_last_length_wins() -> None:
    messages = [Message.user("Beijing to Shanghai for 3 days"), Message.assistant("<answer>plan</answer>"),
                Message.user("Now Beijing to Hangzhou"), Message.user("make it 2 nights")]
    state = request_state("Now Beijing to Hangzhou", messages, NOW.date(), PlaceReader(load_sandbox().gazetteer))
    assert state.texts == ("Now Beijing to Hangzhou", "make it 2 nights")
    assert requested_length(state.texts).nights == 2  # type: ignore[union-attr]
    assert requested_length(["Now Beijing to Hangzhou"]) is None


@pytest.mark.parametrize(("texts", "nights"), [
    (["Beijing to Shanghai for 3 days", "one more night"], 3),
    (["北京到上海三天两晚", "多住一晚"], 3),
    (["北京到上海三天两晚", "少住一晚"], 1),
    (["北京到上海玩两天", "晚一天出发"], 1),  # a day later moves the trip; it is not a one-day trip
    (["Beijing to Shanghai for 2 days", "leave a day later", "2 more nights"], 3),
])
def test_a_change_moves_the_length_the_person_asked_for(texts: list[str], nights: int) -> None:
    found = length_in(texts)
    assert found is not None and found.nights == nights, (texts, found)


async def test_a_plan_shorter_than_asked_is_not_graded_the_best(tmp_path) -> None:
    """The plan of a day trip, graded against a request for three days: the conversation (its
    searches) is the day trip's, so only the requested length is wrong."""
    sandbox = load_sandbox()
    day_trip = await offline_run(sandbox, "Beijing to Shanghai, a day trip, 2026-12-05", NOW)
    same_day = day_trip.plan
    assert same_day is not None and same_day.start_date == same_day.end_date
    validator = Validator(facts=sandbox.facts(), tools=sandbox.tools, model=None)
    request = "Plan a 3-day trip from Beijing to Shanghai, leaving 2026-12-05"
    messages = [Message.user(request), *day_trip.messages[1:]]
    assessed = await validator.assess(request=request, reply="", plan=same_day, messages=messages, lang="en", now=NOW)
    assert assessed.label in (Label.NEED_UNMET, Label.CONSTRAINT_BROKEN), assessed.report
    assert any("3 days" in f.line("en") for f in assessed.report.findings), assessed.report  # type: ignore[union-attr]

    three = await offline_run(sandbox, request, NOW)
    assert three.plan is not None and (three.plan.start_date, three.plan.end_date) == ("2026-12-05", "2026-12-07")
    assessed = await validator.assess(request=request, reply="", plan=three.plan, messages=three.messages, lang="en",
                                      now=NOW)
    assert assessed.label is Label.EXCELLENT, assessed.report
