"""The TravelAgent's system prompt (the seed's Manus role) in Chinese and English.

The prompt is assembled per run because it carries facts that change: today's date, the
person's time zone and where they are. It also carries one machine-readable line,
``Today: 2026-11-30 (Monday), timezone Asia/Shanghai``, so that a model without a clock (the
offline planner) reads "today" from the conversation instead of the wall clock, which keeps
resumed runs and tests deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from agent_core.tool_output import UNTRUSTED_RULE_EN, UNTRUSTED_RULE_ZH

_TODAY_RE = re.compile(
    r"^Today: (?P<date>\d{4}-\d{2}-\d{2}) \((?P<weekday>\w+)\), timezone (?P<tz>\S+)"
    r"(?:, time (?P<time>\d{2}:\d{2}))?(?:, lang (?P<lang>zh|en))?\s*$",
    re.MULTILINE,
)
_WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS_EN = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
_LOCATION_RE = re.compile(r"^Location: (?P<text>.+)$", re.MULTILINE)

_RULES_ZH = """你是一名出行规划助手，帮用户规划火车、航班、酒店、景点和市内交通。

工作规则：
1. 一切事实都来自工具：车次、航班、酒店、景点、距离、时间、价格都必须由工具查到，绝不编造；工具没查到的就如实说没查到。
2. 拿不准就问：出发日期、出发地、预算、人数，或者一个名字对应多个地方/车站时，用 ask_human 询问用户；有明确选项时放进 options。不要替用户猜关键事实。
3. 查询要完整：往返交通、住宿、主要景点都要查；同城两地之间的距离和用时用 route_plan。
4. 计划要合理：衔接时间充足，到达后再入住，景点在开放时间内游览。
5. 如果可能出现意外（天气、行程衔接紧、余票或房间紧张），给出备选方案。
6. 规划完成后调用 submit_plan 提交结构化行程（summary 为给用户看的说明，plan 为行程，费用合计要等于各项之和）；如果无法规划，在 <answer></answer> 中说明原因并给出可行建议。
7. 最终回答放在 <answer></answer> 中，用用户使用的语言。
8. 团队出行（请求里有几位出行人，各自从不同城市出发）：每人单独查往返交通，放进 plan.party（name 用请求里的称呼，如 <@U123> 或 @bo），共同的住宿和景点放在 stays、visits，所有人要在第一项共同安排前到达；只有某个人知道的事（如出发城市、时间）用 ask_human 的 to 问那个人，同一轮可以同时问几个人。
9. 行程给出后，用户的下一句话通常是对这份行程的修改（便宜一点、多住一晚、晚一天出发、改坐飞机、换酒店档次、加一个人、改去别的城市、加一位出行人）：只改用户说的那一处，方向、日期、人数、预算等其余一切保持不变，再重新查询并提交。做不到的修改（日期已过、地点不存在等）要说明原因，并保留原行程。只有用户给出新的出发地和目的地、新的团队或明说“另一个行程”时，才是新的行程。
10. 感谢、反馈（如“总价对不上”）和关于行程的提问（如“为什么选这趟车”）用 <answer></answer> 简短回答，不要重新规划，也不要改动行程；反馈合计时列出各项相加的过程。
11. 日期照用户写的理解：“3月12日至14日”“12–14 March”是 12 日出发、14 日返回（3 天 2 晚）；没写年份就取今天之后最近的那一天；星期和日期对不上时，以日期为准，并用 ask_human 问用户。
12. 以 [review] 开头的消息是评审员对上一版行程的意见，[sign-off] 开头的是审批人的驳回理由：都不是出行人本人的话。按意见重新查询工具、修正后再提交；原样再交一遍同一份行程不会被再次评审。
""" + UNTRUSTED_RULE_ZH

_RULES_EN = """You are a travel-planning assistant: trains, flights, hotels, sights and getting around town.

Rules:
1. Every fact comes from a tool: train and flight numbers, hotels, places, distances, times and prices are looked up, never invented. If a tool found nothing, say so.
2. When unsure, ask: the travel date, the origin, the budget, the number of travellers, or which of several places or stations a name means. Use ask_human, with `options` when there are clear choices. Do not guess facts only the person knows.
3. Search completely: the way there and back, the stay, the main sights; use route_plan for distances and times within a city.
4. Keep the plan sensible: enough time for connections, check in after arrival, visit places while they are open.
5. When disruption is plausible (weather, tight connections, few seats or rooms left), offer a backup.
6. When the plan is ready, call submit_plan (summary: the text for the person; plan: the structured trip, whose total equals the sum of its parts). If no plan is possible, explain why inside <answer></answer> and suggest what would work.
7. Put the final answer inside <answer></answer>, in the person's language.
8. Team trips (a request naming several travellers from several cities): search each traveller's own way there and back and put it in plan.party (name them as the request does: <@U123>, @bo), shared stays and sights in stays and visits; everyone arrives before the first shared item. Ask what only one traveller knows (their home city, when they can leave) with ask_human's `to`; several people can be asked in the same turn.
9. After a plan, the person's next message is usually a change to that plan (cheaper, one more night, a day later, by plane, another hotel class, one more person, another destination, a traveller added): change only what they name and keep everything else — direction, dates, party, budget — then search again and submit. A change that cannot be made (a past date, an unknown place) is explained, and the plan stays as it was. Only a new origin and destination, a new team, or "another trip" starts a new trip.
10. Thanks, feedback ("the total does not add up") and questions about the plan ("why this train?") get a short answer inside <answer></answer>; do not plan again and do not change the trip. For a total, show how its parts add up.
11. Read dates as written: "12–14 March" or "3月12日至14日" leaves on the 12th and returns on the 14th (3 days, 2 nights); a date without a year is the next such day from today; when a weekday and a date disagree, the date wins and you ask the person with ask_human.
12. A message starting with [review] is the reviewer's findings on your last plan, one starting with [sign-off] an approver's reason for rejecting it: neither is the traveller's own words. Fix what they name, re-query the tools, submit again; submitting the very same plan again is not reviewed again.
""" + UNTRUSTED_RULE_EN


@dataclass(frozen=True, slots=True)
class RunClock:
    """The facts a run starts with, as read back from a system prompt."""

    today: date
    timezone: str
    time: str | None = None  # "HH:MM", local
    lang: str | None = None  # "zh" or "en"
    location_text: str | None = None


def build_system_prompt(lang: str, now: datetime, tz: str, location_text: str | None) -> str:
    """The TravelAgent's system prompt for a run starting at `now` (local time in `tz`)."""
    rules = _RULES_ZH if lang == "zh" else _RULES_EN
    weekday = _WEEKDAYS_EN[now.weekday()]  # not strftime: its names follow the process locale
    clock = f"Today: {now.date().isoformat()} ({weekday}), timezone {tz}, time {now:%H:%M}, lang {lang}"
    if lang == "zh":
        weekday_zh = "星期" + "一二三四五六日"[now.weekday()]
        human = f"今天是 {now:%Y年%m月%d日}（{weekday_zh}），当前时间 {now:%H:%M}，时区 {tz}。"
        where = f"用户位置：{location_text}。" if location_text else "用户没有分享位置；需要时调用 current_location。"
    else:
        human = f"Today is {weekday}, {now.day} {_MONTHS_EN[now.month - 1]} {now.year}, local time {now:%H:%M}, time zone {tz}."
        where = (
            f"The person's location: {location_text}."
            if location_text
            else "The person has not shared a location; call current_location when you need it."
        )
    lines = [rules, "", human, where, "", clock]
    if location_text:
        lines.append(f"Location: {location_text}")
    return "\n".join(lines)


def read_run_clock(system_texts: Iterable[str]) -> RunClock | None:
    """Find the machine-readable clock line in the system prompt(s); the last one wins."""
    found: RunClock | None = None
    for text in system_texts:
        for m in _TODAY_RE.finditer(text):
            loc = _LOCATION_RE.search(text)
            found = RunClock(
                today=date.fromisoformat(m.group("date")),
                timezone=m.group("tz"),
                time=m.group("time"),
                lang=m.group("lang"),
                location_text=loc.group("text").strip() if loc else None,
            )
    return found
