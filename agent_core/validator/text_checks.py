"""A plan written only as text, checked the way a structured plan is: each ride must be one this
run's tools returned (on the day its line names), at the times and for a price the tool gave,
and still be there when the provider is asked again; each hotel must be one hotel_search
returned, at its rate."""

from __future__ import annotations

import asyncio
import re
from datetime import date

from agent_core.validator import wording_facts as F
from agent_core.validator import wording_run as W
from agent_core.validator.evidence import RunEvidence, SeenHotel, SeenRide
from agent_core.validator.fact_checks import PRICE_TOLERANCE
from agent_core.validator.facts import FactSource, RideFact, RideKind, RideMissing
from agent_core.validator.findings import Category, CheckReport
from agent_core.validator.grounding import returned, ride_said
from agent_core.validator.items import place_key
from agent_core.validator.prose import TextHotel, TextPlan, TextRide, read_text_plan
from agent_core.validator.wording import Value, kind

MAX_NIGHTS = 30
_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]{3,}")


async def check_text(
    text: str, evidence: RunEvidence, facts: FactSource, travellers: int, today: date, report: CheckReport,
) -> TextPlan:
    """Reads `text` and checks what it found; returns what was read (empty: nothing to check)."""
    known = tuple(dict.fromkeys(n for n, _ in evidence.hotel_names() if n))
    plan = read_text_plan(text, today, known)
    party = max(1, travellers)
    matched = [_match(r, evidence) for r in plan.rides]
    lookups = [
        _provider(r, seen[0], facts) if seen else _none()
        for r, seen in zip(plan.rides, matched, strict=True)
    ]
    provider = await asyncio.gather(*lookups)
    hotels = [h for h in plan.hotels if _comparable(h.name, evidence)]
    report.lookups += len(plan.rides) + len(hotels)
    for ride, seen, fact in zip(plan.rides, matched, provider, strict=True):
        _check_ride(ride, seen, fact, evidence, party, report)
    for hotel in hotels:
        _check_hotel(hotel, evidence, party, report)
    return plan


def _comparable(name: str, evidence: RunEvidence) -> bool:
    """A name in Latin letters only can be held against the run's hotels only when some of them
    have Latin names too (a model may translate a Chinese name; that is not an invented hotel)."""
    if _CJK.search(name):
        return True
    return any(_LATIN.search(n) for n, _ in evidence.hotel_names())


def _item(ride: TextRide) -> str:
    return f"reply: {ride.number}" + (f" {ride.day.isoformat()}" if ride.day else "")


def _match(ride: TextRide, evidence: RunEvidence) -> list[SeenRide]:
    """The run's rides of that number: on the text's day when it names one, best times first."""
    seen = evidence.rides_of(ride.number)
    if ride.day is not None:
        seen = [r for r in seen if r.depart[:10] == ride.day.isoformat()]
    return sorted(seen, key=lambda r: -sum(t in (r.depart[11:16], r.arrive[11:16]) for t in ride.times))


async def _none() -> None:
    return None


async def _provider(ride: TextRide, seen: SeenRide, facts: FactSource) -> RideFact | RideMissing:
    kind_: RideKind = "train" if seen.kind == "train" else "flight"
    return await facts.ride(kind_, seen.number, seen.depart[:10], seen.origin, seen.destination, seen.depart)


def _check_ride(ride: TextRide, seen: list[SeenRide], fact: RideFact | RideMissing | None, evidence: RunEvidence,
                party: int, report: CheckReport) -> None:
    item = _item(ride)
    if not seen:
        others = evidence.rides_of(ride.number)
        if others and ride.day is not None:
            days = ", ".join(sorted({r.depart[:10] for r in others}))
            report.add(Category.FACT, item, W.RUN_OTHER_DAY(number=ride.number, days=days, day=ride.day.isoformat()), ride_said(others[0]))
        else:
            report.add(Category.FACT, item, W.TEXT_RIDE_MISSING(kind=kind(ride.kind), number=ride.number), returned(evidence, ride.kind))
        return
    best = seen[0]
    real = {best.depart[11:16], best.arrive[11:16]}
    stray = [t for t in ride.times if t not in real]
    if stray:
        report.add(Category.FACT, item, W.TEXT_WRONG_TIME(number=ride.number, stated=", ".join(stray), depart=best.depart[11:16],
                                                          arrive=best.arrive[11:16]), ride_said(best))
    named = [p for s, p in best.fares if s == ride.seat]
    fares = named or [p for _, p in best.fares]  # the class the text names, when the ride has it
    for price in ride.prices:
        if fares and not any(abs(price - f * k) <= PRICE_TOLERANCE * k for f in fares for k in {1, party}):
            offer: Value = tuple(F.FARE(seat=s or "-", price=p) for s, p in best.fares)
            report.add(Category.FACT, item, W.TEXT_WRONG_PRICE(price=price), W.TEXT_FARES(number=ride.number, offer=offer))
    if isinstance(fact, RideMissing):
        report.add(Category.FACT, item, F.RIDE_MISSING(number=ride.number),
                   F.RIDE_MISSING_EVIDENCE(tool=f"{best.kind}_search", reason=fact.reason))
    elif isinstance(fact, RideFact):
        now = {fact.depart[11:16], fact.arrive[11:16]}
        moved = [t for t in ride.times if t not in now and t in real]
        if moved:
            said = F.RIDE_SAID(tool=f"{fact.kind}_search", number=fact.number, origin=fact.origin, depart=fact.depart,
                               destination=fact.destination, arrive=fact.arrive)
            report.add(Category.FACT, item, W.TEXT_WRONG_TIME(number=ride.number, stated=", ".join(moved),
                                                              depart=fact.depart[11:16], arrive=fact.arrive[11:16]), said)


def _same_hotel(name: str, seen: str) -> bool:
    """One hotel as a model may shorten it: one name inside the other, or every character of
    the shorter one in order in the longer ("7天酒店" for "7天连锁酒店(北京国家博物馆店)")."""
    a, b = place_key(name), place_key(seen)
    if not a or not b:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if short in long_:
        return True
    it = iter(long_)
    return len(short) >= 4 and all(ch in it for ch in short)


def _check_hotel(hotel: TextHotel, evidence: RunEvidence, party: int, report: CheckReport) -> None:
    item = f"reply: {hotel.name}"
    seen: list[SeenHotel] = [h for _, h in evidence.hotel_names() if _same_hotel(hotel.name, h.name)]
    if not seen:
        names = list(dict.fromkeys(n for n, _ in evidence.hotel_names()))
        report.add(Category.FACT, item, W.TEXT_HOTEL_MISSING(name=hotel.name),
                   W.RUN_RETURNED(tool="hotel_search", seen=", ".join(names[:12])) if names else W.RUN_NOTHING(tool="hotel_search"))
        return
    for price in hotel.prices:
        ok = any(abs(price - h.price * r * n) <= PRICE_TOLERANCE * r * n
                 for h in seen for r in range(1, party + 1) for n in range(1, MAX_NIGHTS + 1))
        if not ok:
            report.add(Category.FACT, item, W.TEXT_WRONG_PRICE(price=price), W.TEXT_RATE(name=seen[0].name, price=seen[0].price))
