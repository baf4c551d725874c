"""A plan's rows in words, for every surface alike: a price counted out ("¥553 × 2 people =
¥1,106"), the total for the party and for each traveller, a place named for its reader.

The numbers come from tools.plan_costs (one function prices every item); the places from
tools.travel.names (English beside the Chinese in an English plan, Chinese alone in a Chinese
one); the counts from agent_core.lang.plural ("1 night", "2 nights", "2晚").
"""

from __future__ import annotations

from datetime import date

from agent_core.lang import pick, plural
from tools.plan_costs import CostLine, PlanCosts, money
from tools.travel.names import PlaceNames

_WORDS = {
    "free": {"zh": "免费", "en": "free"},
    "for": {"zh": "{total}（{people}）", "en": "{total} for {people}"},
    "each": {"zh": "{total}（{people}，人均 {each}）", "en": "{total} for {people} ({each} each)"},
    "about_each": {"zh": "{total}（{people}，人均约 {each}）", "en": "{total} for {people} (about {each} each)"},
    "share": {"zh": "应付 {amount}", "en": "pays {amount}"},
    "next_day": {"zh": "次日{time}", "en": "{time} (+1 day)"},
    "days_later": {"zh": "{days}天后{time}", "en": "{time} (+{days} days)"},
}


def word(key: str, lang: str, **values: object) -> str:
    return pick(_WORDS[key], lang, **values)


def arrival(depart: str, arrive: str, lang: str) -> str:
    """A ride's arrival beside its departure ("YYYY-MM-DD HH:MM" both): the time alone on the same
    day, and the days later when it arrives after (an overnight train: '08:26 (+1 day)', '次日08:26').
    A time that cannot be read is shown as it was given."""
    try:
        days = (date.fromisoformat(arrive[:10]) - date.fromisoformat(depart[:10])).days
    except ValueError:
        return arrive
    time = arrive[11:16]
    if days == 0:
        return time
    if days == 1:
        return word("next_day", lang, time=time)
    return word("days_later", lang, time=time, days=days) if days > 1 else arrive


def place(name: str, lang: str) -> str:
    """北京南 (Beijing South) in an English plan, 北京南 in a Chinese one."""
    return PlaceNames.packaged().label(name, lang)


def counted(line: CostLine, lang: str) -> str:
    """What the line counts: '2 people', '2 rooms × 3 nights' ('' when it counts one of a thing)."""
    return " × ".join(plural(f.count, f.unit, lang) for f in line.counted)


def priced(line: CostLine, lang: str, currency: str = "CNY") -> str:
    """The line's price as a person checks it: '¥553 × 2 people = ¥1,106', '¥450 × 1 night = ¥450',
    '¥553'; a free ticket 'free'; a leg without a price ''."""
    if not line.amount:
        return word("free", lang) if line.kind == "ticket" else ""
    what = counted(line, lang)
    if not what:
        return money(line.amount, currency)
    if line.exact:
        return f"{money(line.unit_price, currency)} × {what} = {money(line.amount, currency)}"
    return f"{money(line.amount, currency)} ({what})" if lang != "zh" else f"{money(line.amount, currency)}（{what}）"


def total_text(costs: PlanCosts, lang: str, currency: str = "CNY") -> str:
    """'¥4,236 for 2 people (¥2,118 each)'; one traveller: '¥4,236'; a team: '¥9,120 for 3 people'
    (each one's share is on their own line)."""
    total = money(costs.total, currency)
    if costs.travellers == 1:
        return total
    people = plural(costs.travellers, "person", lang)
    if costs.shares:
        return word("for", lang, total=total, people=people)
    key = "each" if costs.even else "about_each"
    return word(key, lang, total=total, people=people, each=money(costs.each, currency))


def share_text(costs: PlanCosts, who: str, lang: str, currency: str = "CNY") -> str:
    """'pays ¥3,040': a team traveller's legs, their part of what the party shares, their tickets."""
    share = costs.share_of(who)
    return word("share", lang, amount=money(share or 0.0, currency))
