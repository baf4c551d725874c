"""Short titles Slack shows: a step's task in the answer's stream ("Searching trains Beijing →
Hangzhou"), and an agent session's title from its trip ("Hangzhou offsite, 12–14 March")."""

from __future__ import annotations

from datetime import date

from agent_core.lang import pick
from tools.plan import TripPlan

SESSION_TITLE_LIMIT = 200  # agents.sessions.setStatus / rename take at most 200 characters

# a travel tool's call as what the agent is doing; the arguments it names, in this order
_TASKS: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "train_search": ({"zh": "查询火车 {0} → {1}", "en": "Searching trains {0} → {1}"},
                     ("depart_station", "arrive_station")),
    "flight_search": ({"zh": "查询航班 {0} → {1}", "en": "Searching flights {0} → {1}"},
                      ("departure_city_name", "arrival_city_name")),
    "hotel_search": ({"zh": "查找{0}的酒店", "en": "Looking for hotels in {0}"}, ("city_name",)),
    "poi_search": ({"zh": "查找 {0}", "en": "Looking up {0}"}, ("query",)),
    "poi_around_search": ({"zh": "查找{0}附近", "en": "Looking around {0}"}, ("location",)),
    "route_plan": ({"zh": "规划路线 {0} → {1}", "en": "Finding the way {0} → {1}"}, ("origin", "destination")),
    "web_search": ({"zh": "搜索：{0}", "en": "Searching the web: {0}"}, ("query",)),
    "current_location": ({"zh": "确定你的位置", "en": "Finding where you are"}, ()),
    "submit_plan": ({"zh": "整理行程", "en": "Writing up the plan"}, ()),
}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")


def args_line(arguments: dict[str, object]) -> str:
    parts = [str(v) for v in arguments.values() if isinstance(v, str | int | float) and str(v).strip()]
    text = " · ".join(parts)
    return text if len(text) <= 80 else text[:79] + "…"


def task_title(name: str, arguments: dict[str, object], lang: str = "en") -> str:
    """A tool call as a task's title (plain text): what the agent is doing, in the person's
    language; a tool without a phrase (or missing what it names) shows its name and key values."""
    known = _TASKS.get(name)
    if known is not None:
        words, keys = known
        values = [str(arguments.get(k) or "").strip() for k in keys]
        if all(values):
            return pick(words, lang).format(*values)
    args = args_line(arguments)
    return f"{name} · {args}" if args else name


def _day(value: str) -> date | None:
    try:
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


def trip_dates(start: str, end: str, lang: str) -> str:
    """"12–14 March", "30 March – 2 April", "3月12–14日"; the text as given when it is no date."""
    a, b = _day(start), _day(end) or _day(start)
    if a is None or b is None:
        return " – ".join(x for x in dict.fromkeys((start.strip(), end.strip())) if x)
    if lang == "zh":
        head = f"{a.year}年" if a.year != b.year else ""
        if a == b:
            return f"{a.month}月{a.day}日"
        if (a.year, a.month) == (b.year, b.month):
            return f"{a.month}月{a.day}–{b.day}日"
        tail = f"{b.year}年" if a.year != b.year else ""
        return f"{head}{a.month}月{a.day}日–{tail}{b.month}月{b.day}日"
    if a == b:
        return f"{a.day} {_MONTHS[a.month - 1]}"
    if (a.year, a.month) == (b.year, b.month):
        return f"{a.day}–{b.day} {_MONTHS[a.month - 1]}"
    years = a.year != b.year
    first = f"{a.day} {_MONTHS[a.month - 1]}" + (f" {a.year}" if years else "")
    return f"{first} – {b.day} {_MONTHS[b.month - 1]}" + (f" {b.year}" if years else "")


def trip_title(plan: TripPlan, lang: str) -> str:
    """The session's title once the plan is there: its title and its dates."""
    name = " ".join(plan.title.split()) or f"{plan.origin_city} → {plan.destination_city}"
    dates = trip_dates(plan.start_date, plan.end_date, lang)
    title = f"{name}，{dates}" if lang == "zh" and dates else f"{name}, {dates}" if dates else name
    return title if len(title) <= SESSION_TITLE_LIMIT else title[: SESSION_TITLE_LIMIT - 1] + "…"


def request_title(text: str) -> str:
    """The session's title while there is no plan yet: the request, on one line."""
    line = " ".join(text.split())
    return line if len(line) <= 60 else line[:59] + "…"
