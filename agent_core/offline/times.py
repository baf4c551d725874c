"""Times of day as travellers say them: when to leave ("早上", "8点以后", "after 9am", "10点前出发"),
when to come back (the same words said of the way back: agent_core.offline.way_back), and by when
to arrive ("meeting at 2pm", "need to be there by 11am", "下午两点前到", "两点开会").
"""

from __future__ import annotations

import re

from agent_core.offline.numbers import CN_NUM, to_int

# a departure time: "8点以后", "下午3点后", "after 9am", "not before 10:30"; "10点前出发", "before
# 2pm" ("by 5pm" is left alone: it is as often when to arrive as when to leave)
_CLOCK = rf"(?P<h>\d{{1,2}}|{CN_NUM})(?:\s*[:：]\s*(?P<m>\d{{2}})|\s*点\s*(?P<half>半)?|\s*时)?\s*(?P<ap>am|pm|a\.m\.|p\.m\.)?"
# the same in Chinese, with the part of the day that makes it afternoon ("下午3点", "晚上7点半")
_CLOCK_ZH = rf"(?P<pm>下午|晚上|傍晚)?\s*(?P<h>\d{{1,2}}|{CN_NUM})(?:\s*[:：]\s*(?P<m>\d{{2}})|\s*点\s*(?P<half>半)?)"
_AFTER_ZH = re.compile(rf"{_CLOCK_ZH}\s*(?:以后|之后|后)(?:出发|走|的车|的航班)?")
_BEFORE_ZH = re.compile(rf"{_CLOCK_ZH}\s*(?:以前|之前|前)(?:出发|走)")
_AFTER_EN = re.compile(rf"\b(?:after|not before|from)\s+{_CLOCK}", re.I)
_BEFORE_EN = re.compile(rf"(?<!not )\b(?:before|no later than)\s+{_CLOCK}(?=\s|$|[,.;!?])", re.I)
_MORNING = re.compile(r"早上|上午|早晨|清早|morning", re.I)
_AFTERNOON = re.compile(r"下午|中午以后|afternoon", re.I)
_EVENING = re.compile(r"晚上出发|傍晚|夜里出发|evening|at night", re.I)
# one ride named by its time: "the 10am train", "坐10点那班车": within half an hour of it
_RIDE_AT_EN = re.compile(rf"\b(?:the\s+)?{_CLOCK}\s+(?:train|flight|one|departure)\b", re.I)
_RIDE_AT_ZH = re.compile(rf"{_CLOCK_ZH}\s*"
                         rf"(?:的|那班|那趟)(?:车|高铁|火车|动车|航班|飞机)")
RIDE_AT_MIN = 30
_AFTER_WORK = re.compile(r"下班后|下了班|下班以后|\bafter work\b|\bafter the office\b", re.I)
_EVENING_BACK = re.compile(r"晚上|傍晚|夜里|evening|at night|tonight", re.I)  # said of the way back, 晚上 alone is enough

# by when to be there: an arrival said outright, or an appointment (arrive an hour before it)
_ARRIVE_EN = re.compile(rf"\b(?:arrive|be there|get there|be in [A-Z][\w']+|reach [A-Z][\w']+|land)\s+(?:by|before|no later than)\s+{_CLOCK}", re.I)
_APPOINTMENT_EN = re.compile(rf"\b(?:meeting|conference|appointment|interview|wedding|event|talk|presentation)\s+"
                             rf"(?:at|starts at|is at|starting at)\s+{_CLOCK}", re.I)
_ARRIVE_ZH = re.compile(rf"{_CLOCK_ZH}\s*"
                        rf"(?:以前|之前|前)\s*(?:要)?(?:到|到达|赶到|抵达)")
_APPOINTMENT_ZH = re.compile(rf"{_CLOCK_ZH}\s*"
                             rf"(?:有个?会|开会|的会|会议|面试|婚礼|活动|见客户)")
APPOINTMENT_LEAD_MIN = 60  # from the station or airport to the appointment
APPOINTMENT_MIN = 120  # what the person arrives for takes this long, before any sights


def _clock(m: re.Match[str] | None) -> str | None:
    """"HH:MM" of a time matched by _CLOCK or _CLOCK_ZH, None when it is no time of day ("after 3"
    alone: English needs am/pm or minutes)."""
    if m is None:
        return None
    hour = to_int(m.group("h"))
    groups = m.groupdict()
    minute = int(groups["m"]) if groups.get("m") else 30 if groups.get("half") else 0
    ap = (groups.get("ap") or "").lower().replace(".", "")
    english = "ap" in groups and groups.get("pm") is None
    if hour is None or (english and not ap and not groups.get("m")):  # "after 3" alone: not a time
        return None
    if (ap == "pm" or groups.get("pm")) and hour < 12:
        hour += 12
    if ap == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}" if 0 <= hour <= 23 and 0 <= minute <= 59 else None


def window(text: str, undated: str, *, back: bool = False) -> tuple[str | None, str | None]:
    """The part of the day `text` says ("HH:MM" after, before): a morning, an afternoon, an
    evening, narrowed by a time of day said outright. `back`: said of the way back, where 晚上
    alone is the evening (leaving, it is more often the night before)."""
    evening = _EVENING_BACK if back else _EVENING
    text, undated = _noon(text), _noon(undated)
    after = before = None
    if _MORNING.search(text):
        after, before = "06:00", "12:00"
    elif _AFTERNOON.search(text):
        after, before = "12:00", "18:00"
    elif evening.search(text):
        after, before = "17:00", "23:59"
    if _AFTER_WORK.search(text):  # "周五下班后出发": the evening
        after, before = "18:00", "23:59"
    if (at := _clock(_RIDE_AT_ZH.search(undated)) or _clock(_RIDE_AT_EN.search(undated))) is not None:
        after, before = _minus(at, RIDE_AT_MIN), _minus(at, -RIDE_AT_MIN)
    after = _clock(_AFTER_ZH.search(undated)) or _clock(_AFTER_EN.search(undated)) or after
    before = _clock(_BEFORE_ZH.search(undated)) or _clock(_BEFORE_EN.search(undated)) or before
    return after, before


_NOON = re.compile(r"\b(?:noon|midday)\b", re.I)


def _noon(text: str) -> str:
    """"noon" as a time the readers take ("12pm"), each position kept (spans stay valid)."""
    return _NOON.sub(lambda m: "12pm".ljust(len(m.group())), text)


def arrival(text: str) -> tuple[str | None, tuple[int, int] | None]:
    """("HH:MM" to arrive by on the first day, the words that say it), or (None, None)."""
    text = _noon(text)
    for pattern, lead in ((_ARRIVE_ZH, 0), (_ARRIVE_EN, 0), (_APPOINTMENT_ZH, APPOINTMENT_LEAD_MIN),
                          (_APPOINTMENT_EN, APPOINTMENT_LEAD_MIN)):
        m = pattern.search(text)
        said = _clock(m)
        if m is not None and said is not None:
            return _minus(said, lead), m.span()
    return None, None


def busy_until(arrive_before: str) -> str:
    """The first day's time taken by what the person arrives for: sights start after it."""
    return _minus(arrive_before, -(APPOINTMENT_LEAD_MIN + APPOINTMENT_MIN))


def _minus(clock: str, minutes: int) -> str:
    total = min(max(int(clock[:2]) * 60 + int(clock[3:]) - minutes, 0), 23 * 60 + 59)
    return f"{total // 60:02d}:{total % 60:02d}"
