"""Validator: the deterministic checks, then (with a real model) the rubric; one verdict.

A failed check caps the verdict: the rubric may only make it worse, never better, so a model
that is talked round by a confident reply cannot pass a plan whose train does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent_core.model import ChatModel, TokenUsage
from agent_core.schema import Message
from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import person_texts, read_constraints
from agent_core.validator.errors import RubricUnavailable
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import CheckReport
from agent_core.validator.labels import Label, worst
from agent_core.validator.reference import validation_input
from agent_core.validator.rubric import RubricResult, ValidatorAgent
from agent_core.validator.trip_length import check_requested_length
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import TripPlan


@dataclass(frozen=True, slots=True)
class Assessment:
    label: Label
    report: CheckReport | None  # None when the reply has no structured plan to check
    rubric: RubricResult | None
    rubric_skipped: bool  # no rubric model, or it gave no verdict
    rubric_error: RubricUnavailable | None = None


class Validator:
    def __init__(
        self, *, facts: FactSource, tools: ToolCollection, model: ChatModel | None, max_steps: int = 12,
        home_city: str = "北京",
    ) -> None:
        """`model` None: deterministic checks only (the offline planner has no judgement to lend)."""
        self.checker = PlanChecker(facts)
        self.tools = tools
        self.model = model
        self.max_steps = max_steps
        self.home_city = home_city

    async def assess(
        self, *, request: str, reply: str, plan: TripPlan | None, messages: Sequence[Message], lang: str,
        now: datetime, usage: TokenUsage | None = None,
    ) -> Assessment:
        report = None
        if plan is not None:
            constraints = read_constraints(person_texts(request, messages), now.date())
            report = await self.checker.check(plan, constraints)
            check_requested_length(plan, request, messages, report)  # read apart from the planner's parse
        if self.model is None:
            return Assessment(report.label() if report else Label.EXCELLENT, report, None, True)
        agent = ValidatorAgent.create(
            model=self.model, tools=self.tools, max_steps=self.max_steps, usage=usage,
            context=ToolContext(tool_call_id="", now=now, lang=lang, home_city=self.home_city),
            input_text=validation_input(request=request, reply=reply, plan=plan, messages=messages, checks=report, lang=lang),
        )
        try:
            rubric = await agent.grade()
        except RubricUnavailable as exc:
            fallback = report.label() if report else Label.EXCELLENT
            return Assessment(fallback, report, None, True, exc)
        return Assessment(worst(rubric.label, report.cap() if report else None), report, rubric, False)
