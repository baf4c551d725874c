"""PlanChecker: every deterministic check of a plan, no model needed.

Order: grounding in this run's tool results (when the run is known), the provider asked again,
the timeline, the physics of each leg, where the person is, currency, completeness, the
person's constraints and needs. A plan written only as text is read and checked by check_text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from agent_core.schema import Message
from agent_core.validator.constraint_checks import check_complete, check_constraints, check_needs
from agent_core.validator.constraints import Constraints, person_texts, read_constraints
from agent_core.validator.currency import check_currency
from agent_core.validator.evidence import RunEvidence
from agent_core.validator.fact_checks import check_facts
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import CheckReport
from agent_core.validator.grounding import check_grounding
from agent_core.validator.party import check_party
from agent_core.validator.physics import check_physics
from agent_core.validator.prose import TextPlan
from agent_core.validator.text_checks import check_text
from agent_core.validator.timeline import check_timeline
from agent_core.validator.whereabouts import check_whereabouts
from tools.plan import TripPlan

_BACKUP = re.compile(r"备选|备用|替代方案|万一|如遇|backup|alternative|plan b", re.I)


class PlanChecker:
    def __init__(self, facts: FactSource) -> None:
        self.facts = facts

    async def check(
        self, plan: TripPlan, constraints: Constraints, *, evidence: RunEvidence | None = None, text: str | None = None,
    ) -> CheckReport:
        """`evidence`: what the run's tools returned (None: the plan is graded without its run, and
        only the provider vouches for its items); `text`: the reply the person reads."""
        report = CheckReport(has_backups=bool(plan.alternatives))
        # a team plan is checked as each traveller lives it, then as a party that has to meet
        views = [plan.for_traveller(p.name) for p in plan.party] or [plan]
        for view in views:
            if evidence is not None:
                check_grounding(view, evidence, report)
            await check_facts(view, self.facts, report)
            await check_timeline(view, self.facts, report)
            await check_physics(view, self.facts, report)
            check_whereabouts(view, self.facts, report)
        check_party(plan, report)
        check_currency(plan, text, report)
        check_complete(views[0], constraints, self.facts, report)
        check_constraints(views[0], constraints, report)
        check_needs(views[0], constraints, report)
        return report

    async def check_text(
        self, text: str, constraints: Constraints, evidence: RunEvidence, today: date,
    ) -> tuple[CheckReport, TextPlan]:
        """A reply with no structured plan: its rides, hotels, times and prices, read from the text."""
        report = CheckReport()
        travellers = constraints.request.travellers or 1
        read = await check_text(text, evidence, self.facts, travellers, today, report)
        report.has_backups = bool(_BACKUP.search(text))
        return report, read

    async def check_conversation(
        self, plan: TripPlan, request: str, messages: Sequence[Message], today: date
    ) -> CheckReport:
        return await self.check(plan, read_constraints(person_texts(request, messages), today),
                                evidence=RunEvidence.from_messages(messages))
