"""What a plan costs, line by line: the one place that says what each priced item counts and
what it adds to the total. Every surface renders these lines (the web card, the Telegram and
Slack messages, the CSV cost sheet), so the rows a person reads add up to the total beside them.

How a TripPlan (tools.plan) prices things:
- `Leg.price` is the fare for everyone on the leg: the plan's travellers for a leg they share,
  the one traveller for a leg of their own on a team trip (`party[k].legs`).
- `HotelStay.total` is what the stay costs: `nights` x `price_per_night`, the nightly rate of all
  the stay's `rooms` together.
- `Visit.ticket_price` is one ticket; every traveller needs one.

Amounts are added in whole fen (cents), so a total is exactly the sum of its lines, and the
shares of a team trip (what each traveller pays) are exactly the total: the fen that do not
divide evenly go to the first travellers.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from tools.plan import TripPlan

Unit = Literal["person", "room", "night"]
LineKind = Literal["leg", "stay", "ticket"]


@dataclass(frozen=True, slots=True)
class Factor:
    """One thing a line counts: 2 people, 3 nights, 2 rooms."""

    count: int
    unit: Unit


@dataclass(frozen=True, slots=True)
class CostLine:
    kind: LineKind
    index: int  # the item's place in plan.legs, the traveller's legs, plan.stays or plan.visits
    who: str  # "" when the party shares it; else the traveller it belongs to (a team trip's own legs)
    unit_price: float  # per person (legs, tickets) or per room and night (stays)
    factors: tuple[Factor, ...]
    amount: float  # what the line adds to the total

    @property
    def exact(self) -> bool:
        """unit_price x the factors is the amount to the fen (else show the amount alone: a fare
        of 100 for three people is not 33.33 x 3)."""
        return _fen(self.unit_price * prod(f.count for f in self.factors)) == _fen(self.amount)

    @property
    def counted(self) -> tuple[Factor, ...]:
        """The factors worth saying: nights always, people and rooms when there are several."""
        return tuple(f for f in self.factors if f.unit == "night" or f.count != 1)


@dataclass(frozen=True, slots=True)
class Share:
    who: str
    amount: float


@dataclass(frozen=True, slots=True)
class Part:
    """What one traveller of a team trip pays of one line: all of their own, a fair part of a
    shared one (the fen that do not divide go round the party in turn)."""

    who: str
    line: CostLine
    amount: float


@dataclass(frozen=True, slots=True)
class PlanCosts:
    lines: tuple[CostLine, ...]
    total: float  # the sum of the lines' amounts
    travellers: int
    parts: tuple[Part, ...]  # a team trip: each line split among the travellers
    shares: tuple[Share, ...]  # a team trip: what each traveller pays, the sum of their parts

    @property
    def each(self) -> float:
        """What one traveller pays when everyone pays the same (a plan without a party)."""
        return round(self.total / max(self.travellers, 1), 2)

    @property
    def even(self) -> bool:
        """The total divides evenly among the travellers, to the fen."""
        return _fen(self.total) % max(self.travellers, 1) == 0

    def of(self, who: str) -> list[CostLine]:
        return [line for line in self.lines if line.who == who]

    def share_of(self, who: str) -> float | None:
        return next((s.amount for s in self.shares if s.who == who), None)


def plan_costs(plan: TripPlan) -> PlanCosts:
    """Every priced item of `plan` as a line, in the order a plan is read: the party's own legs
    (team trips), the shared legs, the stays, the tickets."""
    n = max(plan.travellers, 1)
    lines: list[CostLine] = []
    for person in plan.party:
        for i, leg in enumerate(person.legs):
            lines.append(CostLine("leg", i, person.name, _cny(leg.price), (Factor(1, "person"),), _cny(leg.price)))
    for i, leg in enumerate(plan.legs):
        lines.append(CostLine("leg", i, "", _cny(leg.price / n), (Factor(n, "person"),), _cny(leg.price)))
    for i, stay in enumerate(plan.stays):
        rooms = stay.rooms or 1
        factors = (Factor(rooms, "room"), Factor(stay.nights, "night"))
        lines.append(CostLine("stay", i, "", _cny(stay.price_per_night / rooms), factors, _cny(stay.total)))
    for i, visit in enumerate(plan.visits):
        ticket = _cny(visit.ticket_price)
        lines.append(CostLine("ticket", i, "", ticket, (Factor(n, "person"),), _cny(ticket * n)))
    total = sum(_fen(line.amount) for line in lines)
    parts = _parts([p.name for p in plan.party], lines)
    shares = tuple(Share(name, sum(_fen(p.amount) for p in parts if p.who == name) / 100)
                   for name in dict.fromkeys(p.name for p in plan.party))
    return PlanCosts(tuple(lines), total / 100, n, parts, shares)


def _parts(names: list[str], lines: list[CostLine]) -> tuple[Part, ...]:
    """Round robin for the odd fen, carried from one line to the next: over the whole plan the
    first travellers pay at most one fen more than the others, and the parts add up to the total."""
    if not names:
        return ()
    parts: list[Part] = []
    turn = 0
    for line in lines:
        if line.who:
            parts.append(Part(line.who, line, line.amount))
            continue
        base, extra = divmod(_fen(line.amount), len(names))
        for k in range(len(names)):
            one_more = (k - turn) % len(names) < extra
            parts.append(Part(names[k], line, (base + one_more) / 100))
        turn = (turn + extra) % len(names)
    return tuple(parts)


def money(amount: float, currency: str = "CNY") -> str:
    """¥1,106 or ¥553.50 (whole yuan without decimals); another currency by its code."""
    value = f"{amount:,.0f}" if _fen(amount) % 100 == 0 else f"{amount:,.2f}"
    return f"¥{value}" if currency == "CNY" else f"{value} {currency}"


def _fen(amount: float) -> int:
    return round(amount * 100)


def _cny(amount: float) -> float:
    return _fen(amount) / 100
