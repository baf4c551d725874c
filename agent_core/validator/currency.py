"""Currency: every travel tool prices in CNY and a plan's amounts are those prices, so a plan that
names another currency disagrees with its own amounts; so does a reply that writes one of the
plan's amounts in another currency ("$1813" for a total of 1813 CNY)."""

from __future__ import annotations

import re

from agent_core.validator import wording_run as W
from agent_core.validator.findings import Category, CheckReport
from tools.plan import TripPlan

CNY = frozenset({"CNY", "RMB", "CNH", "YUAN", "人民币", "元", "¥", "￥"})
_FOREIGN = (
    r"US\$|\$|USD|美元|美金|€|EUR|欧元|£|GBP|英镑|JPY|日元|円|HKD|港币|港元|KRW|韩元|THB|泰铢|SGD|新加坡元"
)
_AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_BEFORE = re.compile(rf"(?P<cur>{_FOREIGN})\s?(?P<amt>{_AMOUNT})")
_AFTER = re.compile(rf"(?P<amt>{_AMOUNT})\s?(?P<cur>{_FOREIGN})")


def is_cny(currency: str) -> bool:
    return currency.strip().upper() in CNY or currency.strip() in CNY


def check_currency(plan: TripPlan, text: str | None, report: CheckReport) -> None:
    if not is_cny(plan.currency):
        report.add(Category.FACT, "currency", W.CURRENCY(currency=plan.currency),
                   W.CURRENCY_EVIDENCE(example=_example(plan)))
    if not text:
        return
    amounts = _plan_amounts(plan)
    for m in [*_BEFORE.finditer(text), *_AFTER.finditer(text)]:
        value = float(m.group("amt").replace(",", ""))
        if any(abs(value - a) <= 1.0 for a in amounts):
            quote = text[max(0, m.start() - 20) : m.end() + 10].replace("\n", " ").strip()
            report.add(Category.FACT, "reply", W.TEXT_CURRENCY(amount=value, currency=m.group("cur"), plan_currency=plan.currency),
                       W.TEXT_SAYS(quote=quote))


def _plan_amounts(plan: TripPlan) -> list[float]:
    out = [plan.total_cost]
    out += [leg.price for leg in plan.legs if leg.price]
    out += [v for s in plan.stays for v in (s.total, s.price_per_night) if v]
    return [a for a in out if a >= 10]  # small numbers are too common to tie to a price


def _example(plan: TripPlan) -> str:
    for leg in plan.legs:
        if leg.price:
            return f"{leg.number or leg.kind} {leg.price:g} CNY"
    return f"total_cost {plan.total_cost:g}"
