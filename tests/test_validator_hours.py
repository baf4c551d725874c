"""Opening hours: the whole visit (start + duration) must fit, hours may run past midnight, and
day rules ("周一闭馆", weekends only "周六日 …") close a place for the day."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest

from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import read_constraints
from agent_core.validator.findings import Category
from agent_core.validator.hours import closed_reason
from tests.validator_support import Sandbox, load_sandbox
from tools.plan import TripPlan, Visit

MONDAY = date(2027, 3, 1)
CORPUS = Path(__file__).parent / "validator_corpus"
POIS = Path(__file__).parents[1] / "tools" / "travel" / "data" / "pois.json"


def visit(start: str | None, minutes: int | None = 60, day: date = MONDAY + timedelta(days=1)) -> Visit:
    return Visit(poi_id="P", name="某地", city="北京", date=day.isoformat(), start=start, duration_min=minutes)


def key(hours: str, v: Visit) -> str | None:
    found = closed_reason(hours, v)
    return found.key if found else None


@pytest.mark.parametrize(
    ("hours", "start", "minutes", "expected"),
    [
        ("08:30-17:00", "15:00", 120, None),  # ends exactly at closing
        ("08:30-17:00", "16:00", 120, "poi.outside_hours"),  # starts inside, ends after closing
        ("08:30-17:00", "08:00", 60, "poi.outside_hours"),  # starts before opening
        ("08:30-17:00", "17:00", None, "poi.outside_hours"),  # no duration: starting at closing is too late
        ("06:00-01:00", "23:00", 90, None),  # past midnight: open until 1 am
        ("06:00-01:00", "00:20", 30, None),  # after midnight, still the previous day's opening
        ("06:00-01:00", "00:30", 60, "poi.outside_hours"),  # ends 01:30
        ("06:00-01:00", "02:00", 30, "poi.outside_hours"),
        ("05:00-24:00", "22:30", 90, None),
        ("05:00-24:00", "23:30", 60, "poi.outside_hours"),
        ("19:00-22:30", "21:30", 90, "poi.outside_hours"),
        ("全天", "23:00", 180, None),  # always open, even across midnight
        ("日出-日落", "06:00", 60, None),  # not readable: nothing to hold against the plan
        ("12:00-14:00(预约)", "12:30", 60, None),
        ("", "03:00", 60, None),
    ],
)
def test_the_whole_visit_must_fit_the_opening_hours(hours: str, start: str, minutes: int | None, expected: str | None) -> None:
    assert key(hours, visit(start, minutes)) == expected


def test_weekday_rules_close_the_place_for_the_day() -> None:
    saturday, sunday, wednesday = MONDAY + timedelta(days=5), MONDAY + timedelta(days=6), MONDAY + timedelta(days=2)
    assert key("09:00-17:00 周一闭馆", visit("10:00", day=MONDAY)) == "poi.closed_on"
    assert key("09:00-17:00 周一闭馆", visit(None, day=MONDAY)) == "poi.closed_on"  # closed all day, whatever the time
    assert key("09:00-17:00 周一闭馆", visit("10:00")) is None  # Tuesday
    assert key("09:00-18:00 周二闭", visit("10:00")) == "poi.closed_on"
    assert key("09:30-15:30 周日闭", visit("10:00", day=sunday)) == "poi.closed_on"
    assert key("周六日 09:00-18:00", visit("10:00", day=saturday)) is None
    assert key("周六日 09:00-18:00", visit("10:00", day=sunday)) is None
    assert key("周六日 09:00-18:00", visit("10:00", day=wednesday)) == "poi.closed_on"
    assert key("周六日 09:00-18:00", visit("17:30", 60, day=saturday)) == "poi.outside_hours"


def test_the_reason_reads_in_both_languages() -> None:
    closed = closed_reason("09:00-17:00 周一闭馆", visit("10:00", day=MONDAY))
    assert closed is not None
    assert closed.render("zh") == "周一不开放（开放时间 09:00-17:00 周一闭馆）"
    assert closed.render("en") == "it is closed on Mondays (hours 09:00-17:00 周一闭馆)"
    late = closed_reason("08:30-17:00", visit("16:00", 120))
    assert late is not None
    assert late.render("zh") == "游览 16:00–18:00 不在开放时间 08:30-17:00 之内"
    assert late.render("en") == "the visit 16:00–18:00 is not inside the opening hours 08:30-17:00"


def test_every_sandbox_hours_value_is_read_on_every_weekday() -> None:
    hours = {p["hours"] for p in json.loads(POIS.read_text(encoding="utf-8")) if p.get("hours")}
    assert any("周六日" in h for h in hours) and any("闭" in h for h in hours)
    for h in hours:
        for offset in range(7):
            closed_reason(h, visit("10:00", 60, day=MONDAY + timedelta(days=offset)))  # no exception


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return load_sandbox()


async def test_a_visit_running_past_closing_is_flagged_in_a_real_plan(sandbox: Sandbox) -> None:
    entry = json.loads((CORPUS / "ok_bj_sh_train.json").read_text(encoding="utf-8"))
    plan = TripPlan.model_validate(entry["plan"])
    facts = sandbox.facts()
    # the last visit of the first day: moved so that it ends an hour after its place closes
    k, last = max(((k, v) for k, v in enumerate(plan.visits) if v.date == plan.visits[0].date), key=lambda kv: kv[1].start or "")
    poi = await facts.poi(last)
    assert poi is not None and poi.hours[:5].count(":") == 1, poi
    closes = poi.hours.split("-")[1][:5]
    h, m = (int(x) for x in closes.split(":"))
    when = h * 60 + m + 60 - (last.duration_min or 0)
    plan.visits[k] = last.model_copy(update={"start": f"{when // 60:02d}:{when % 60:02d}"})
    report = await PlanChecker(facts).check(plan, read_constraints([entry["request"]], date.fromisoformat(entry["today"])))
    assert report.categories() == {Category.LOGIC}, [f.line() for f in report.findings]
    assert any(f.problem.key == "poi.outside_hours" and f.item.startswith(f"visits[{k}]") for f in report.findings)
