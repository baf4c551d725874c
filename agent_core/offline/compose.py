"""Choosing among the tools' results and writing the plan: rides, a hotel, a day-by-day schedule.

Prices in the plan are for the whole party (legs: fare x travellers; stays: nights x rooms x
rate; visits: one ticket, which TripPlan multiplies by travellers), so `total_cost` is exactly
`TripPlan.computed_total()`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from agent_core.offline.options import Hotel, Ride, Sight
from agent_core.offline.texts import say
from tools.plan import HotelStay, Leg, TripPlan, Visit

_SEAT_ORDER = ("二等座", "一等座", "商务座", "硬卧", "软卧", "硬座", "无座")
_HOURS = re.compile(r"(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})")
_CLOSED = re.compile(r"周([一二三四五六日])(?:闭馆|闭园|闭|休)")
_WEEKDAYS = "一二三四五六日"


@dataclass(slots=True)
class Choice:
    """What the planner picked, and the runners-up for the backup list."""

    out: Ride
    back: Ride | None
    hotel: Hotel | None
    out_backup: Ride | None = None
    back_backup: Ride | None = None
    hotel_backup: Hotel | None = None
    notes: list[str] = field(default_factory=list)


def seat_for(ride: Ride, wanted: str | None, cheapest: bool) -> tuple[str | None, float]:
    if not ride.seats:
        return ride.seat, ride.price
    offered = dict(ride.seats)
    if wanted and wanted in offered and not cheapest:
        return wanted, offered[wanted]
    if cheapest:
        name, price = min(ride.seats, key=lambda s: s[1])
        return name, price
    for name in _SEAT_ORDER:
        if name in offered:
            return name, offered[name]
    return ride.seats[0]


def _at(stamp: str) -> datetime:
    return datetime.strptime(stamp, "%Y-%m-%d %H:%M")


def pick_ride(rides: list[Ride], *, after: str | None, before: str | None, cheapest: bool,
              prefer: str) -> tuple[Ride | None, Ride | None]:
    """The best ride and a backup. `prefer`: "arrive_early" (outbound) or "leave_late" (return)."""
    if not rides:
        return None, None

    def clock(r: Ride) -> str:
        return r.depart[11:16]

    window = [r for r in rides if (after is None or clock(r) >= after) and (before is None or clock(r) <= before)]
    pool = window or rides
    fast = [r for r in pool if r.number[:1] in "GDC" or r.kind == "flight"] or pool
    if cheapest:
        ranked = sorted(pool, key=lambda r: (r.price, r.arrive))
    elif prefer == "arrive_early":
        ranked = sorted(fast, key=lambda r: (r.arrive, r.price)) + [r for r in pool if r not in fast]
    else:
        ranked = sorted(fast, key=lambda r: (r.depart, r.price)) + [r for r in pool if r not in fast]
    best = ranked[0]
    backup = next((r for r in ranked[1:] if r.number != best.number), None)
    return best, backup


def pick_hotel(hotels: list[Hotel], *, cheapest: bool, stars: int | None, breakfast: bool | None,
               budget_per_night: float | None) -> tuple[Hotel | None, Hotel | None]:
    if not hotels:
        return None, None
    pool = [h for h in hotels if (breakfast is None or h.breakfast == breakfast)
            and (stars is None or stars <= 2 or (h.stars or 0) >= stars)] or hotels
    if budget_per_night is not None:
        pool = [h for h in pool if h.price <= budget_per_night] or sorted(pool, key=lambda h: h.price)[:1]
    if cheapest:
        ranked = sorted(pool, key=lambda h: (h.price, -(h.rating or 0)))
    else:
        # best value: rating per price, keeping some comfort
        ranked = sorted(pool, key=lambda h: (-(h.rating or 4.0) / math.log(h.price + 50), h.price))
    best = ranked[0]
    backup = next((h for h in ranked[1:] if h.hotel_id != best.hotel_id), None)
    return best, backup


def _open(sight: Sight, day: date, start: datetime) -> bool:
    if (m := _CLOSED.search(sight.hours)) and _WEEKDAYS.index(m.group(1)) == day.weekday():
        return False
    if (h := _HOURS.search(sight.hours)) is None:
        return True
    opens = start.replace(hour=int(h.group(1)), minute=int(h.group(2)))
    closes = start.replace(hour=min(int(h.group(3)), 23), minute=int(h.group(4)))
    return opens <= start and start + timedelta(minutes=sight.visit_min) <= closes + timedelta(minutes=30)


def schedule(sights: list[Sight], days: list[tuple[date, datetime, datetime]], city: str,
             cheapest: bool) -> list[Visit]:
    """Fill each day's free window with sights, in the tools' order (cheap first when asked)."""
    pool = sorted(sights, key=lambda s: s.price) if cheapest else list(sights)
    visits: list[Visit] = []
    used: set[str] = set()
    for day, begin, end in days:
        cursor = begin
        per_day = 0
        for s in pool:
            if s.poi_id in used or per_day >= 3:
                continue
            if cursor + timedelta(minutes=s.visit_min) > end:
                continue
            start = cursor
            h = _HOURS.search(s.hours)
            if h and start.hour * 60 + start.minute < int(h.group(1)) * 60 + int(h.group(2)):
                start = start.replace(hour=int(h.group(1)), minute=int(h.group(2)))
            if start + timedelta(minutes=s.visit_min) > end or not _open(s, day, start):
                continue
            visits.append(Visit(poi_id=s.poi_id, name=s.name, city=s.city or city, date=day.isoformat(),
                                start=start.strftime("%H:%M"), duration_min=s.visit_min, ticket_price=s.price))
            used.add(s.poi_id)
            per_day += 1
            cursor = start + timedelta(minutes=s.visit_min + 40)  # getting to the next place
    return visits


def leg_of(ride: Ride, seat: str | None, fare: float, travellers: int, origin_city: str, dest_city: str) -> Leg:
    return Leg(kind="train" if ride.kind == "train" else "flight", number=ride.number, origin=ride.origin,
               destination=ride.destination, origin_city=origin_city, destination_city=dest_city,
               depart=ride.depart, arrive=ride.arrive, seat=seat, airline=ride.airline,
               price=round(fare * travellers, 2), source_id=ride.source_id)


def build_plan(*, lang: str, origin: str, destination: str, start: date, nights: int, travellers: int,
               choice: Choice, sights: list[Sight], seat: str | None, cheapest: bool,
               alternatives: list[str], notes: list[str]) -> TripPlan:
    end = start + timedelta(days=nights)
    out_seat, out_fare = seat_for(choice.out, seat, cheapest)
    legs = [leg_of(choice.out, out_seat, out_fare, travellers, origin, destination)]
    if choice.back is not None:
        back_seat, back_fare = seat_for(choice.back, seat, cheapest)
        legs.append(leg_of(choice.back, back_seat, back_fare, travellers, destination, origin))
    stays = []
    if choice.hotel is not None and nights >= 1:
        rooms = max(1, math.ceil(travellers / 2))
        rate = round(choice.hotel.price * rooms, 2)
        stays.append(HotelStay(hotel_id=choice.hotel.hotel_id, name=choice.hotel.name, city=destination,
                               checkin_date=start.isoformat(), checkout_date=end.isoformat(), nights=nights,
                               price_per_night=rate, total=round(rate * nights, 2), breakfast=choice.hotel.breakfast))
    # free windows: after arrival (and check-in) on day one, full days, before the train home
    arrive = _at(choice.out.arrive)
    leave = _at(choice.back.depart) if choice.back else datetime.combine(end, datetime.min.time()).replace(hour=20)
    windows = []
    for i in range(nights + 1):
        day = start + timedelta(days=i)
        begin = datetime.combine(day, datetime.min.time()).replace(hour=9)
        finish = datetime.combine(day, datetime.min.time()).replace(hour=19)
        if i == 0:
            begin = max(begin, arrive + timedelta(minutes=60 if nights == 0 else 90))
        if i == nights:
            finish = min(finish, leave - timedelta(minutes=150))
        if begin.date() == day and finish > begin:
            windows.append((day, begin, finish))
    visits = schedule(sights, windows, destination, cheapest)
    title = (f"{origin} → {destination} {nights + 1}天{nights}晚" if lang == "zh"
             else f"{origin} → {destination}, {nights + 1} days / {nights} nights")
    plan = TripPlan(title=title, origin_city=origin, destination_city=destination, start_date=start.isoformat(),
                    end_date=end.isoformat(), travellers=travellers, legs=legs, stays=stays, visits=visits,
                    alternatives=alternatives, notes=[*notes, say("sandbox_note", lang)], data_source="sandbox")
    plan.total_cost = plan.computed_total()
    return plan


def ride_line(ride: Ride, lang: str) -> str:
    if lang == "zh":
        return f"{ride.number} {ride.depart[5:]} {ride.origin} → {ride.arrive[11:]} {ride.destination}（{ride.price:g}元起）"
    return f"{ride.number} {ride.depart[5:]} {ride.origin} → {ride.arrive[11:]} {ride.destination} (from {ride.price:g} CNY)"


def summary_text(plan: TripPlan, lang: str) -> str:
    zh = lang == "zh"
    lines = [plan.title, f"{plan.start_date} → {plan.end_date}" + (f"，{plan.travellers}人" if zh else f", {plan.travellers} traveller(s)")]
    lines.append("")
    lines.append("交通：" if zh else "Getting there and back:")
    for leg in plan.legs:
        what = f"{leg.number}" + (f"（{leg.airline}）" if leg.airline and zh else f" ({leg.airline})" if leg.airline else "")
        seat = f" {leg.seat}" if leg.seat else ""
        money = f"{leg.price:g}元" if zh else f"{leg.price:g} CNY"
        lines.append(f"- {leg.depart} {leg.origin} → {leg.arrive[11:]} {leg.destination}  {what}{seat}  {money}")
    if plan.stays:
        lines.append("住宿：" if zh else "Stay:")
        for s in plan.stays:
            bf = ("含早" if s.breakfast else "不含早") if zh else ("breakfast included" if s.breakfast else "no breakfast")
            lines.append(f"- {s.name}（{s.checkin_date} 入住，{s.nights}晚，{bf}，{s.total:g}元）" if zh
                         else f"- {s.name} (check in {s.checkin_date}, {s.nights} night(s), {bf}, {s.total:g} CNY)")
    if plan.visits:
        lines.append("行程：" if zh else "Sights:")
        for v in plan.visits:
            ticket = (f"门票{v.ticket_price:g}元" if v.ticket_price else "免费") if zh else (f"ticket {v.ticket_price:g} CNY" if v.ticket_price else "free")
            dur = f"{v.duration_min}分钟" if zh else f"{v.duration_min} min"
            lines.append(f"- {v.date} {v.start} {v.name}（{dur}，{ticket}）" if zh else f"- {v.date} {v.start} {v.name} ({dur}, {ticket})")
    lines.append("")
    lines.append(f"合计约 {plan.total_cost:g} 元" if zh else f"Total about {plan.total_cost:g} CNY")
    if plan.alternatives:
        lines.append("备选：" if zh else "Backups:")
        lines += [f"- {a}" for a in plan.alternatives]
    if plan.notes:
        lines.append("说明：" if zh else "Notes:")
        lines += [f"- {n}" for n in plan.notes]
    return "\n".join(lines)
