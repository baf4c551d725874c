"""The offline planner's plan in words: the answer text it submits with the plan (every row
priced as every surface prices it, tools.plan_costs), a backup ride in one line, a trip's length
("3天2晚", "3 days / 2 nights", "day trip")."""

from __future__ import annotations

from agent_core.lang import plural
from agent_core.offline.options import Ride
from agent_core.plan_words import arrival, place, priced, total_text, word
from tools.plan import TripPlan
from tools.plan_costs import plan_costs


def length_words(nights: int, lang: str) -> str:
    """'3天2晚', '3 days / 2 nights'; a trip back the same day is a day trip ('一日往返'), not '1 day / 0 nights'."""
    if nights == 0:
        return "一日往返" if lang == "zh" else "day trip"
    if lang == "zh":
        return f"{nights + 1}天{nights}晚"
    return f"{plural(nights + 1, 'day', lang)} / {plural(nights, 'night', lang)}"


def ride_line(ride: Ride, lang: str) -> str:
    if lang == "zh":
        return f"{ride.number} {ride.depart[5:]} {ride.origin} → {arrival(ride.depart, ride.arrive, lang)} {ride.destination}（{ride.price:g}元起）"
    return f"{ride.number} {ride.depart[5:]} {ride.origin} → {arrival(ride.depart, ride.arrive, lang)} {ride.destination} (from {ride.price:g} CNY)"


def summary_text(plan: TripPlan, lang: str) -> str:
    zh = lang == "zh"
    lines = [plan.title, f"{plan.start_date} → {plan.end_date}" + (f"，{plan.travellers}人" if zh else f", {plural(plan.travellers, 'traveller', lang)}")]
    lines.append("")
    # the rows as every surface prices them (tools.plan_costs): they add up to the total shown
    costs = plan_costs(plan)
    rows = {(c.kind, c.index): c for c in costs.lines if not c.who}
    lines.append("交通：" if zh else "Getting there and back:")
    for i, leg in enumerate(plan.legs):
        what = f"{leg.number}" + (f"（{leg.airline}）" if leg.airline and zh else f" ({leg.airline})" if leg.airline else "")
        seat = f" {leg.seat}" if leg.seat else ""
        money = priced(rows[("leg", i)], lang, plan.currency) if ("leg", i) in rows else ""
        lines.append(f"- {leg.depart} {place(leg.origin, lang)} → {arrival(leg.depart, leg.arrive, lang)} {place(leg.destination, lang)}"
                     f"  {what}{seat}  {money}".rstrip())
    if plan.stays:
        lines.append("住宿：" if zh else "Stay:")
        for i, s in enumerate(plan.stays):
            bf = ("含早" if s.breakfast else "不含早") if zh else ("breakfast included" if s.breakfast else "no breakfast")
            cost = priced(rows[("stay", i)], lang, plan.currency) if ("stay", i) in rows else ""
            nights = plural(s.nights, "night", lang)
            lines.append(f"- {place(s.name, lang)}（{s.checkin_date} 入住，{nights}，{bf}：{cost}）" if zh
                         else f"- {place(s.name, lang)} (check in {s.checkin_date}, {nights}, {bf}: {cost})")
    if plan.visits:
        lines.append("行程：" if zh else "Sights:")
        for i, v in enumerate(plan.visits):
            ticket = priced(rows[("ticket", i)], lang, plan.currency) if ("ticket", i) in rows else word("free", lang)
            ticket = ticket if zh or ticket == word("free", lang) else f"ticket {ticket}"
            dur = f"{v.duration_min}分钟" if zh else f"{v.duration_min} min"
            lines.append(f"- {v.date} {v.start} {place(v.name, lang)}（{dur}，{ticket}）" if zh
                         else f"- {v.date} {v.start} {place(v.name, lang)} ({dur}, {ticket})")
    lines.append("")
    lines.append(f"合计 {total_text(costs, lang, plan.currency)}" if zh else f"Total {total_text(costs, lang, plan.currency)}")
    if plan.alternatives:
        lines.append("备选：" if zh else "Backups:")
        lines += [f"- {a}" for a in plan.alternatives]
    if plan.notes:
        lines.append("说明：" if zh else "Notes:")
        lines += [f"- {n}" for n in plan.notes]
    return "\n".join(lines)
