"""Build the Validator's corpus from real sandbox results: plans the offline planner made with the
sandbox tools, and copies of them with exactly one injected fault each.

    .venv/bin/python -m tests.validator_corpus.generate     # rewrites tests/validator_corpus/*.json

Each file: {"id", "request", "today", "fault", "expected", "plan"}; `expected` is "ok" or the
category (agent_core.validator.findings.Category value) every finding must have.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path

from agent_core.validator.findings import Category
from tests.validator_support import Sandbox, load_sandbox, offline_plan, run_clock
from tools.plan import HotelStay, TripPlan, Visit

HERE = Path(__file__).parent
TODAY = "2026-12-01"

# request templates: {d} is the start date as the person wrote it
BASES: list[tuple[str, str, date]] = [
    ("bj_sh_train", "{d}从北京去上海玩3天", date(2027, 3, 5)),
    ("sh_hz_budget", "{d}从上海去杭州玩2天，预算5000", date(2027, 3, 12)),
    ("bj_cd_flight", "{d}从北京飞成都玩4天", date(2027, 4, 2)),
    ("sh_bj_en", "{d} from Shanghai to Beijing for 3 days, 2 people", date(2027, 3, 19)),
    ("nj_wh_noflight", "{d}从南京去武汉玩3天，不坐飞机", date(2027, 3, 20)),
    ("bj_xa_seat", "{d}从北京去西安玩3天，二等座", date(2027, 4, 9)),
    ("sh_xm_flight", "{d}从上海去厦门玩3天，坐飞机", date(2027, 4, 16)),
    ("sz_cs_breakfast", "{d}从深圳去长沙玩3天，酒店要含早餐", date(2027, 3, 26)),
    ("bj_qd_en", "{d} from Beijing to Qingdao, 3 days", date(2027, 4, 23)),
    ("gz_gl_train", "{d}从广州去桂林玩3天，坐高铁", date(2027, 5, 7)),
]


def zh_date(d: date) -> str:
    return f"{d.year}年{d.month}月{d.day}日"


def written(template: str, d: date) -> str:
    return template.format(d=zh_date(d) if "从" in template else d.strftime("%B %-d %Y"))


def retotal(plan: TripPlan) -> TripPlan:
    plan.total_cost = plan.computed_total()
    return plan


def _unused_number(sandbox: Sandbox, kind: str, prefix: str, day: date) -> str:
    for n in range(9999, 1000, -7):
        number = f"{prefix}{n}"
        exists = sandbox.provider.get_train(number, day) if kind == "train" else sandbox.provider.get_flight(number, day)
        if exists is None:
            return number
    raise RuntimeError("no free number")


Fault = Callable[[Sandbox, TripPlan, str, date], tuple[TripPlan, str] | None]


def wrong_departure_time(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    leg = plan.legs[0]
    dep = datetime.strptime(leg.depart, "%Y-%m-%d %H:%M") - timedelta(minutes=37)
    leg.depart = dep.strftime("%Y-%m-%d %H:%M")
    return plan, request


def no_such_ride(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    leg = plan.legs[0]
    prefix = "".join(ch for ch in (leg.number or "G") if not ch.isdigit())[:2] or "G"
    leg.number = _unused_number(sb, leg.kind, prefix, d)
    leg.source_id = leg.number
    return plan, request


def hotel_other_city(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    if not plan.stays:
        return None
    stay = plan.stays[0]
    here = sb.gazetteer.resolve_city(stay.city).id
    other = next(c for c in ("suzhou", "nanjing", "hangzhou", "tianjin", "wuhan") if c != here)
    cin, cout = date.fromisoformat(stay.checkin_date), date.fromisoformat(stay.checkout_date)
    h = sb.provider.hotels.list(sb.gazetteer.city(other), cin, cout)[0]
    rooms = max(1, math.ceil(plan.travellers / 2))
    plan.stays[0] = HotelStay(hotel_id=h.hotel_id, name=h.name, city=stay.city, checkin_date=stay.checkin_date,
                              checkout_date=stay.checkout_date, nights=stay.nights, price_per_night=h.price * rooms,
                              total=h.price * rooms * stay.nights, breakfast=h.has_breakfast)
    return retotal(plan), request


def overlapping_legs(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    """A day trip whose way home (a real train or flight) leaves before the way there arrives."""
    out = plan.legs[0]
    if len(plan.legs) < 2:
        return None
    back = plan.legs[1]
    found = None
    if out.kind == "train":
        rides = sb.provider.trains.direct((back.origin,), (back.destination,), d)
        found = next((r for r in rides if r.depart < out.arrive and r.depart > out.depart), None)
        if found is not None:
            back.number, back.origin, back.destination = found.number, found.from_station, found.to_station
            back.depart, back.arrive = found.depart, found.arrive
            open_seats = [s for s in found.seats if s.left > 0] or found.seats
            seat = next((s for s in open_seats if s.seat == back.seat), open_seats[0])
            back.seat, back.price = seat.seat, seat.price * plan.travellers
    if found is None:
        return None
    back.source_id = back.number
    plan.end_date = plan.start_date
    plan.stays, plan.visits = [], []
    day_trip = request.replace("玩3天", "一日游").replace("玩4天", "一日游").replace("玩2天", "一日游").replace("for 3 days", "day trip").replace(", 3 days", ", day trip")
    return retotal(plan), day_trip


def too_short_transfer(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    """The last sight before the way home ends 10 minutes before it leaves, across town."""
    back = plan.legs[-1]
    last_day = back.depart[:10]
    city = sb.gazetteer.resolve_city(plan.destination_city)
    dep = datetime.strptime(back.depart, "%Y-%m-%d %H:%M")
    for poi in sb.gazetteer.pois_in(city):
        start = dep - timedelta(minutes=10 + poi.visit_min)
        hours = poi.hours.split()[0] if poi.hours else ""
        if "-" not in hours or "闭" in poi.hours:
            continue
        opens, closes = hours.split("-")
        if not (opens <= start.strftime("%H:%M") < closes) or start.date() != dep.date():
            continue
        if any(v.poi_id == poi.id for v in plan.visits):
            continue
        plan.visits = [v for v in plan.visits if v.date != last_day]
        plan.visits.append(Visit(poi_id=poi.id, name=poi.name_zh, city=plan.destination_city, date=last_day,
                                 start=start.strftime("%H:%M"), duration_min=poi.visit_min, ticket_price=poi.price))
        return retotal(plan), request
    return None


def over_budget(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    if "预算" in request or "budget" in request:
        return None
    budget = int(plan.total_cost * 0.6)
    return plan, request + (f"，预算{budget}元" if "从" in request else f", budget {budget} CNY")


def forbidden_transport(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    if any(w in request for w in ("不坐", "坐飞机", "坐高铁", "飞")):
        return None
    kind = plan.legs[0].kind
    if "从" in request:
        return plan, request + ("，不坐高铁" if kind == "train" else "，不坐飞机")
    return plan, request + (", no trains" if kind == "train" else ", no flights")


def wrong_date(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    """The plan is real, for the day after the day the person asked for."""
    return plan, request.replace(zh_date(d), zh_date(d - timedelta(days=1))).replace(
        d.strftime("%B %-d %Y"), (d - timedelta(days=1)).strftime("%B %-d %Y"))


def missing_return(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    plan.legs = plan.legs[:1]
    return retotal(plan), request


def total_mismatch(sb: Sandbox, plan: TripPlan, request: str, d: date) -> tuple[TripPlan, str] | None:
    plan.total_cost = round(plan.total_cost - 180, 2)
    return plan, request


def correct_variants(request: str, plan: TripPlan) -> list[tuple[str, str]]:
    """The request as made, and restatements the plan also satisfies (a budget it keeps, a
    transport it does not use), so the checks are seen passing constraints too."""
    zh = "从" in request
    out = [("", request)]
    if "预算" not in request and "budget" not in request:
        budget = int(plan.total_cost * 1.3) + 1
        out.append(("_within_budget", request + (f"，预算{budget}元" if zh else f", budget {budget} CNY")))
    kinds = {leg.kind for leg in plan.legs}
    if not any(w in request for w in ("不坐", "坐飞机", "坐高铁", "飞")):
        if kinds == {"train"}:
            out.append(("_no_flights", request + ("，不坐飞机" if zh else ", no flights")))
        elif kinds == {"flight"}:
            out.append(("_no_trains", request + ("，不坐火车" if zh else ", no trains")))
    return out


FAULTS: list[tuple[str, Fault, Category]] = [
    ("wrong_departure_time", wrong_departure_time, Category.FACT),
    ("no_such_ride", no_such_ride, Category.FACT),
    ("hotel_other_city", hotel_other_city, Category.FACT),
    ("overlapping_legs", overlapping_legs, Category.LOGIC),
    ("too_short_transfer", too_short_transfer, Category.LOGIC),
    ("over_budget", over_budget, Category.CONSTRAINT),
    ("forbidden_transport", forbidden_transport, Category.CONSTRAINT),
    ("wrong_date", wrong_date, Category.CONSTRAINT),
    ("missing_return_leg", missing_return, Category.INCOMPLETE),
    ("total_mismatch", total_mismatch, Category.FACT),
]
PER_FAULT = 3


async def build() -> list[dict[str, object]]:
    sb = load_sandbox()
    now = run_clock(TODAY)
    bases: list[tuple[str, str, date, TripPlan]] = []
    for name, template, d in BASES:
        request = written(template, d)
        plan = await offline_plan(sb, request, now)
        if plan is None:
            raise RuntimeError(f"the offline planner made no plan for {request!r}")
        bases.append((name, request, d, plan))
    entries: list[dict[str, object]] = []
    for name, request, _d, plan in bases:
        for suffix, variant in correct_variants(request, plan):
            entries.append({"id": f"ok_{name}{suffix}", "request": variant, "today": TODAY, "fault": None,
                            "expected": "ok", "plan": plan.model_dump()})
    for fault_name, fault, category in FAULTS:
        made = 0
        for name, request, d, plan in bases:
            if made >= PER_FAULT:
                break
            result = fault(sb, plan.model_copy(deep=True), request, d)
            if result is None:
                continue
            faulty, faulty_request = result
            entries.append({"id": f"{fault_name}_{name}", "request": faulty_request, "today": TODAY,
                            "fault": fault_name, "expected": category.value, "plan": faulty.model_dump()})
            made += 1
        if made == 0:
            raise RuntimeError(f"no base plan could carry the fault {fault_name}")
    return entries


def main() -> None:
    entries = asyncio.run(build())
    for old in HERE.glob("*.json"):
        old.unlink()
    for entry in entries:
        (HERE / f"{entry['id']}.json").write_text(json.dumps(entry, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"plans": len(entries), "ok": sum(1 for e in entries if e["expected"] == "ok")}))


if __name__ == "__main__":
    main()
