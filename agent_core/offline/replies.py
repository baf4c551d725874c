"""Conversation beyond planning: short answers to thanks, feedback and questions about the plan
on the table, and the word that a change cannot be made. None of them changes the trip."""

from __future__ import annotations

import re

from agent_core.lang import plural
from agent_core.offline.changes import Remark
from agent_core.offline.state import Refusal
from agent_core.offline.texts import say
from agent_core.plan_words import arrival
from tools.plan import TripPlan

_ABOUT_TOTAL = re.compile(r"total|add up|adds up|\bsum\b|cost|price|how much|expensive|per person|多少钱|总价|合计|加起来|算错|费用|价格|花费|人均|钱", re.I)
_ABOUT_RIDE = re.compile(r"train|flight|plane|\bride\b|车次|火车|高铁|动车|航班|飞机|这趟|这班", re.I)
_ABOUT_HOTEL = re.compile(r"hotel|\bstay\b|room|酒店|住宿|房间|住的", re.I)
_ABOUT_SIGHTS = re.compile(r"sights?|visit|museum|place|景点|游览|参观", re.I)
_ABOUT_TIME = re.compile(r"what time|\bwhen\b|early|late|几点|什么时候|太早|太晚|时间", re.I)


def _money(value: float, lang: str) -> str:
    return f"{value:g}元" if lang == "zh" else f"{value:g} CNY"


def total_breakdown(plan: TripPlan, lang: str) -> str:
    """How the plan's total is made: rides + stays + tickets × travellers."""
    rides = sum(leg.price for leg in plan.legs) + sum(leg.price for t in plan.party for leg in t.legs)
    stays = sum(s.total for s in plan.stays)
    tickets = sum(v.ticket_price for v in plan.visits)
    n = max(1, plan.travellers)
    parts = say("breakdown", lang, rides=_money(rides, lang), stays=_money(stays, lang), tickets=_money(tickets, lang),
                n=n, sum=_money(round(rides + stays + tickets * n, 2), lang), total=_money(plan.total_cost, lang),
                each=_money(round(plan.total_cost / n, 2), lang))
    if plan.party:
        sep = "；" if lang == "zh" else "; "
        parts += " " + say("shares", lang, shares=sep.join(f"{t.name} {_money(plan.cost_of(t.name), lang)}" for t in plan.party))
    return parts


def _rides(plan: TripPlan, lang: str) -> str:
    legs = [*plan.legs, *(leg for t in plan.party for leg in t.legs)]
    sep = "；" if lang == "zh" else "; "
    return sep.join(f"{leg.number or leg.kind} {leg.depart} {leg.origin} → {arrival(leg.depart, leg.arrive, lang)} {leg.destination}"
                    for leg in legs)


def _answer(text: str, plan: TripPlan, lang: str) -> str:
    if _ABOUT_TOTAL.search(text):
        return total_breakdown(plan, lang)
    if _ABOUT_RIDE.search(text):
        return say("why_ride", lang, rides=_rides(plan, lang))
    if _ABOUT_HOTEL.search(text) and plan.stays:
        stay = plan.stays[0]
        return say("why_hotel", lang, name=stay.name, rate=_money(stay.price_per_night, lang), nights=plural(stay.nights, "night", lang))
    if _ABOUT_SIGHTS.search(text) and plan.visits:
        return say("why_sights", lang, count=len(plan.visits))
    if _ABOUT_TIME.search(text):
        return say("times", lang, rides=_rides(plan, lang))
    return say("about_plan", lang, title=plan.title, start=plan.start_date, end=plan.end_date,
               total=_money(plan.total_cost, lang))


def remark_text(remark: Remark, text: str, plan: TripPlan, lang: str) -> str:
    """The answer to a remark after a plan; the plan itself stays as it is."""
    if remark is Remark.THANKS:
        return say("nothing_new", lang)
    if remark is Remark.UNCLEAR:
        return say("not_understood", lang)
    answer = _answer(text, plan, lang)
    gap = "" if lang == "zh" else " "
    if remark is Remark.FEEDBACK:
        return f"{say('feedback_thanks', lang)}{answer}{gap}{say('how_to_change', lang)}"
    return f"{answer}{gap}{say('how_to_change', lang)}"


def refusal_text(refusal: Refusal, lang: str, has_plan: bool) -> str:
    """Why a change cannot be made, and (with a plan on the table) that the plan stays as it was."""
    text = say(f"cannot_{refusal.key}", lang, **dict(refusal.values))
    gap = "" if lang == "zh" else " "
    return f"{text}{gap}{say('plan_kept', lang)}" if has_plan else text
