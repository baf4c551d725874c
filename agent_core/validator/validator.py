"""Validator: the deterministic checks, then (with a real model) the rubric; one verdict.

A failed check caps the verdict: the rubric may only make it worse, never better, so a model
that is talked round by a confident reply cannot pass a plan whose train does not exist.

What is checked: the structured plan when there is one; otherwise the rides, hotels, times and
prices read from the reply's text. When neither gave anything to check and no rubric verdict
was had (no model, or it failed), the outcome is *not graded* (`label` None): no label is
claimed for a reply nobody checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from agent_core.model import ChatModel, TokenUsage
from agent_core.offline.state import RequestState
from agent_core.prompts.request_note import describe
from agent_core.schema import Message
from agent_core.validator.checker import PlanChecker
from agent_core.validator.constraints import constraints_of, request_state
from agent_core.validator.errors import RubricUnavailable
from agent_core.validator.evidence import RunEvidence
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import CheckReport
from agent_core.validator.labels import Label, worst
from agent_core.validator.reference import reply_without_reasoning, validation_input
from agent_core.validator.rubric import RubricResult, ValidatorAgent
from agent_core.validator.trip_length import check_requested_length
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.plan import TripPlan


@dataclass(frozen=True, slots=True)
class Assessment:
    label: Label | None  # None: not graded (nothing could be checked, no rubric verdict)
    report: CheckReport | None  # None when nothing was checked
    rubric: RubricResult | None
    rubric_skipped: bool  # no rubric model, or it gave no verdict
    rubric_error: RubricUnavailable | None = None
    from_text: bool = False  # the checks read the plan from the reply's text (no structured plan)

    @property
    def graded(self) -> bool:
        return self.label is not None

    @property
    def unsatisfied(self) -> bool:
        return self.label is not None and self.label.unsatisfied


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

    async def checks(
        self, *, request: str, reply: str, plan: TripPlan | None, messages: Sequence[Message], now: datetime,
    ) -> tuple[CheckReport | None, bool]:
        """(the report, whether it was read from the text); None when there was nothing to check."""
        return await self._checks(request_state(request, messages, now.date(), self.checker.places),
                                  reply=reply, plan=plan, messages=messages, now=now)

    async def _checks(
        self, state: RequestState, *, reply: str, plan: TripPlan | None, messages: Sequence[Message], now: datetime,
    ) -> tuple[CheckReport | None, bool]:
        constraints = constraints_of(state)
        evidence = RunEvidence.from_messages(messages)
        if plan is not None:
            report = await self.checker.check(plan, constraints, evidence=evidence, text=reply_without_reasoning(reply))
            check_requested_length(plan, state, report)  # read apart from the planner's parse
            return report, False
        report, read = await self.checker.check_text(reply_without_reasoning(reply), constraints, evidence, now.date())
        return (None, False) if read.empty else (report, True)

    async def assess(
        self, *, request: str, reply: str, plan: TripPlan | None, messages: Sequence[Message], lang: str,
        now: datetime, usage: TokenUsage | None = None,
    ) -> Assessment:
        state = request_state(request, messages, now.date(), self.checker.places)
        report, from_text = await self._checks(state, reply=reply, plan=plan, messages=messages, now=now)
        if self.model is None:
            return Assessment(report.label() if report else None, report, None, True, from_text=from_text)
        agent = ValidatorAgent.create(
            model=self.model, tools=self.tools, max_steps=self.max_steps, usage=usage,
            context=ToolContext(tool_call_id="", now=now, lang=lang, home_city=self.home_city),
            input_text=validation_input(request=request, reply=reply, plan=plan, messages=messages, checks=report, lang=lang,
                                        current=describe(state)),
        )
        try:
            rubric = await agent.grade()
        except RubricUnavailable as exc:
            return Assessment(report.label() if report else None, report, None, True, exc, from_text=from_text)
        return Assessment(worst(rubric.label, report.cap() if report else None), report, rubric, False, from_text=from_text)
