"""PlanChecker: every deterministic check of a plan, no model needed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from agent_core.schema import Message
from agent_core.validator.constraint_checks import check_complete, check_constraints, check_needs
from agent_core.validator.constraints import Constraints, person_texts, read_constraints
from agent_core.validator.fact_checks import check_facts
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import CheckReport
from agent_core.validator.timeline import check_timeline
from tools.plan import TripPlan


class PlanChecker:
    def __init__(self, facts: FactSource) -> None:
        self.facts = facts

    async def check(self, plan: TripPlan, constraints: Constraints) -> CheckReport:
        report = CheckReport(has_backups=bool(plan.alternatives))
        await check_facts(plan, self.facts, report)
        await check_timeline(plan, self.facts, report)
        check_complete(plan, constraints, self.facts, report)
        check_constraints(plan, constraints, report)
        check_needs(plan, constraints, report)
        return report

    async def check_conversation(
        self, plan: TripPlan, request: str, messages: Sequence[Message], today: date
    ) -> CheckReport:
        return await self.check(plan, read_constraints(person_texts(request, messages), today))
