"""The party check of a team plan: everyone arrives before the first shared item, nobody leaves
before the last one ends, everyone has a way there. Each traveller's own legs are checked by
the one-person checks on their view of the plan (`traveller_view`)."""

from __future__ import annotations

from agent_core.validator import wording_plan as W
from agent_core.validator.findings import Category, CheckReport
from tools.party_plan import homeward, meeting_time, outbound, parting_time
from tools.plan import TripPlan

_FORMAT = "%Y-%m-%d %H:%M"


def traveller_view(plan: TripPlan, name: str) -> TripPlan:
    """The plan as one traveller lives it: their way there, the shared items, their way home,
    for one person. The shared stays keep the party's prices (the party's checks grade them);
    the view's total is what its own items add up to, so no check reads the party's total as
    this traveller's."""
    view = plan.for_traveller(name)
    return view.model_copy(update={"total_cost": view.computed_total()})


def check_party(plan: TripPlan, report: CheckReport) -> None:
    if not plan.party:
        return
    meet, part = meeting_time(plan), parting_time(plan)
    meets = W.PARTY_MEETS(meet=f"{meet:{_FORMAT}}" if meet else "?")
    for k, person in enumerate(plan.party):
        item = f"party[{k}] {person.name}"
        if not person.legs:
            report.add(Category.INCOMPLETE, item, W.PARTY_NO_LEGS(who=person.name, city=person.home_city), meets)
            continue
        there, back = outbound(person), homeward(person)
        if meet is not None and there and there[-1].arrive > f"{meet:{_FORMAT}}":
            report.add(Category.LOGIC, item,
                       W.PARTY_LATE(who=person.name, arrive=there[-1].arrive, meet=f"{meet:{_FORMAT}}"), meets)
        if part is not None and back and back[0].depart < f"{part:{_FORMAT}}":
            report.add(Category.LOGIC, item,
                       W.PARTY_LEAVES_EARLY(who=person.name, depart=back[0].depart, end=f"{part:{_FORMAT}}"), meets)
