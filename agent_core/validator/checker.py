"""PlanChecker: every deterministic check of a plan, no model needed.

Order: grounding in this run's tool results (when the run is known), the provider asked again,
the timeline, the physics of each leg, where the person is, currency, completeness, the
person's constraints and needs. A plan written only as text is read and checked by check_text.

A team plan is checked as each traveller lives it (their own legs around the shared stays and
visits, priced for one) and once as the party: the shared hotel and tickets at the party's
size, the total, whether everyone can meet.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from agent_core.offline.places import PlaceReader
from agent_core.schema import Message
from agent_core.validator.constraint_checks import (
    check_budget,
    check_complete,
    check_constraints,
    check_destination,
    check_hotel_class,
    check_needs,
)
from agent_core.validator.constraints import Constraints, constraints_of, request_state
from agent_core.validator.currency import check_currency
from agent_core.validator.evidence import RunEvidence
from agent_core.validator.fact_checks import check_facts
from agent_core.validator.facts import FactSource
from agent_core.validator.findings import CheckReport
from agent_core.validator.grounding import check_grounding
from agent_core.validator.party import check_party, traveller_view
from agent_core.validator.physics import check_physics
from agent_core.validator.prose import TextPlan
from agent_core.validator.text_checks import check_text
from agent_core.validator.timeline import check_timeline, check_totals
from agent_core.validator.whereabouts import check_whereabouts
from tools.plan import TripPlan

_BACKUP = re.compile(r"备选|备用|替代方案|万一|如遇|backup|alternative|plan b", re.I)


class PlanChecker:
    def __init__(self, facts: FactSource) -> None:
        self.facts = facts
        self._places: PlaceReader | None = None

    @property
    def places(self) -> PlaceReader:
        """The names the person's words are read by; built on first use (it compiles every place name)."""
        if self._places is None:
            self._places = PlaceReader(self.facts.gazetteer)
        return self._places

    async def check(
        self, plan: TripPlan, constraints: Constraints, *, evidence: RunEvidence | None = None, text: str | None = None,
    ) -> CheckReport:
        """`evidence`: what the run's tools returned (None: the plan is graded without its run, and
        only the provider vouches for its items); `text`: the reply the person reads."""
        report = CheckReport(has_backups=bool(plan.alternatives))
        if plan.party:
            await self._party(plan, evidence, report)
        else:
            await self._items(plan, evidence, report)
            await check_timeline(plan, self.facts, report)
            await check_physics(plan, self.facts, report)
            check_whereabouts(plan, self.facts, report)
        check_currency(plan, text, report)
        views = [traveller_view(plan, p.name) for p in plan.party] or [plan]
        for view in views:
            check_complete(view, constraints, self.facts, report)
            check_constraints(view, constraints, report)
        check_budget(plan, constraints, report)
        check_needs(plan, constraints, report)
        check_destination(plan, constraints, self.facts, report)
        await check_hotel_class(plan, constraints, self.facts, report)
        return report

    async def _items(self, plan: TripPlan, evidence: RunEvidence | None, report: CheckReport) -> None:
        if evidence is not None:
            check_grounding(plan, evidence, report)
        await check_facts(plan, self.facts, report)

    async def _party(self, plan: TripPlan, evidence: RunEvidence | None, report: CheckReport) -> None:
        """Each traveller's own rides priced for one, and their day around them; the shared stays
        and tickets once, at the party's size; the party's total and meeting."""
        await self._items(plan.model_copy(update={"party": []}), evidence, report)
        for person in plan.party:
            view = traveller_view(plan, person.name)
            await self._items(view.model_copy(update={"stays": [], "visits": []}), evidence, report)
            await check_timeline(view, self.facts, report, totals=False)
            await check_physics(view, self.facts, report)
            check_whereabouts(view, self.facts, report)
        check_totals(plan, report)
        check_party(plan, report)

    async def check_text(
        self, text: str, constraints: Constraints, evidence: RunEvidence, today: date,
    ) -> tuple[CheckReport, TextPlan]:
        """A reply with no structured plan: its rides, hotels, times and prices, read from the text."""
        report = CheckReport()
        travellers = constraints.travellers or 1
        read = await check_text(text, evidence, self.facts, travellers, today, report)
        report.has_backups = bool(_BACKUP.search(text))
        return report, read

    def constraints(self, request: str, messages: Sequence[Message], today: date) -> Constraints:
        """What the person asked for, after every change, read from their words in `messages`."""
        return constraints_of(request_state(request, messages, today, self.places))

    async def check_conversation(
        self, plan: TripPlan, request: str, messages: Sequence[Message], today: date
    ) -> CheckReport:
        return await self.check(plan, self.constraints(request, messages, today),
                                evidence=RunEvidence.from_messages(messages))
