"""submit_plan(summary, plan): the final tool. It checks the plan's arithmetic and dates and ends the run.

Pydantic checks the shape; the checks here are the ones a model gets wrong in practice
(totals that are not the sum of their parts, nights that do not match the dates). A bad plan
becomes an error observation listing every problem, so the model can fix all of them at once,
and the run goes on.
"""

from __future__ import annotations

import re
from datetime import date, datetime

from pydantic import BaseModel, Field, field_validator

from tools.base import BaseTool, ToolContext, ToolResult
from tools.errors import ToolArgumentError
from tools.plan import TripPlan

_ANSWER_TAGS = re.compile(r"</?answer>", re.IGNORECASE)
_TOLERANCE = 1.0  # CNY: rounding of per-night and per-ticket prices


class SubmitPlanParams(BaseModel):
    summary: str = Field(description="The answer for the person, in their language: the plan in words, backups, notes.")
    plan: TripPlan = Field(description="The structured trip: legs, hotel stays, visits, total cost, alternatives, notes.")

    @field_validator("summary")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not _ANSWER_TAGS.sub("", v).strip():
            raise ValueError("the summary must not be empty")
        return v


def _day(value: str, what: str, problems: list[str]) -> date | None:
    try:
        return date.fromisoformat(value)
    except ValueError:
        problems.append(f"{what} {value!r} is not a date in the form YYYY-MM-DD")
        return None


def _moment(value: str, what: str, problems: list[str]) -> datetime | None:
    try:
        return datetime.strptime(value, "%Y-%m-%d %H:%M")
    except ValueError:
        problems.append(f"{what} {value!r} is not a time in the form YYYY-MM-DD HH:MM")
        return None


def plan_problems(plan: TripPlan) -> list[str]:
    """Everything inconsistent in `plan`; empty when it is sound."""
    problems: list[str] = []
    start = _day(plan.start_date, "start_date", problems)
    end = _day(plan.end_date, "end_date", problems)
    if start and end and end < start:
        problems.append(f"end_date {plan.end_date} is before start_date {plan.start_date}")
    for i, leg in enumerate(plan.legs):
        dep = _moment(leg.depart, f"legs[{i}].depart", problems)
        arr = _moment(leg.arrive, f"legs[{i}].arrive", problems)
        # Local times: a flight may land "before" it left across time zones, so only same-zone
        # kinds (trains, city transport) must arrive after they depart.
        if dep and arr and leg.kind != "flight" and arr < dep:
            problems.append(f"legs[{i}] ({leg.number or leg.kind}) arrives before it departs")
        if leg.kind in ("train", "flight") and not leg.number:
            problems.append(f"legs[{i}] is a {leg.kind} without its number")
    for i, stay in enumerate(plan.stays):
        cin = _day(stay.checkin_date, f"stays[{i}].checkin_date", problems)
        cout = _day(stay.checkout_date, f"stays[{i}].checkout_date", problems)
        if cin and cout:
            if cout <= cin:
                problems.append(f"stays[{i}] checks out on {stay.checkout_date}, not after checkin {stay.checkin_date}")
            elif (cout - cin).days != stay.nights:
                problems.append(
                    f"stays[{i}] has nights={stay.nights} but {stay.checkin_date} to {stay.checkout_date} is {(cout - cin).days} nights"
                )
        if abs(stay.nights * stay.price_per_night - stay.total) > _TOLERANCE * stay.nights:
            problems.append(
                f"stays[{i}] total {stay.total:g} is not nights x price_per_night = {stay.nights * stay.price_per_night:g}"
            )
    for i, visit in enumerate(plan.visits):
        day = _day(visit.date, f"visits[{i}].date", problems)
        if day and start and end and not start <= day <= end:
            problems.append(f"visits[{i}] ({visit.name}) on {visit.date} is outside the trip {plan.start_date} to {plan.end_date}")
    expected = plan.computed_total()
    if abs(expected - plan.total_cost) > _TOLERANCE:
        problems.append(
            f"total_cost {plan.total_cost:g} is not the sum of legs, stays and visits ({expected:g})"
        )
    return problems


class SubmitPlan(BaseTool[SubmitPlanParams]):
    name = "submit_plan"
    description = (
        "Finish with the trip plan: `summary` is the answer the person reads, `plan` the structured "
        "trip built only from tool results (train/flight numbers, hotel and POI ids as returned). "
        "total_cost must equal the sum of legs, stays and visit tickets. Ends the run."
    )
    params_model = SubmitPlanParams
    read_only = True
    ends_run = True

    async def execute(self, params: SubmitPlanParams, ctx: ToolContext) -> ToolResult:
        problems = plan_problems(params.plan)
        if problems:
            raise ToolArgumentError(
                "the plan was not accepted, fix these and call submit_plan again: " + "; ".join(problems),
                field="plan",
            )
        text = _ANSWER_TAGS.sub("", params.summary).strip()
        plan = params.plan
        return ToolResult(
            output=f"Plan accepted: {plan.title} ({plan.start_date} to {plan.end_date}, total {plan.total_cost:g} {plan.currency}).",
            summary=plan.title,
            ends_run=True,
            final_text=text,
            plan=plan,
        )
