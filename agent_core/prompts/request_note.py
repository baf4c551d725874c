"""The request state, as the model reads it: a few lines added to the system prompt on every turn
saying what trip is on the table after the person's changes, which changes they asked for, and
what their last message was — so a real model treats "make it cheaper" as a change to that
trip, as the offline planner does (agent_core.offline.state), instead of planning afresh.

`RequestNote` is built once per process from the gazetteer (the names it reads places by) and
handed to the TravelAgent; without one the prompt carries only the rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from agent_core.lang import plural
from agent_core.offline.changes import Remark
from agent_core.offline.places import PlaceReader
from agent_core.offline.request import LEVEL_NAMES
from agent_core.offline.state import RequestState, Said, read_state
from agent_core.offline.transcript import read_transcript
from agent_core.schema import Message
from tools.travel.geo import Gazetteer

_LAST = {
    Said.REQUEST: "a trip request (plan it)",
    Said.CHANGE: "a change to the trip on the table: apply it, keep everything else",
    Said.ANSWER: "an answer to your question",
}
_REMARKS = {
    Remark.THANKS: "thanks: reply briefly, do not plan again",
    Remark.FEEDBACK: "feedback on the plan: answer it (e.g. show how the total adds up); do not plan again unless it asks for a change",
    Remark.QUESTION: "a question about the plan: answer it from the plan and the tool results; do not plan again",
    Remark.UNCLEAR: "unclear: ask what they would like to change",
}


def describe(state: RequestState) -> str | None:
    """The note for `state` (in English: the model reads it, the person never does); None when
    the person has asked for nothing yet."""
    r = state.request
    if not r.stated() and not state.party:
        return None  # nothing asked yet ("hi")
    facts: list[str] = []
    if state.team:
        facts.append("travellers: " + ", ".join(f"{t.label} from {t.home_city or '(ask them)'}" for t in state.party))
    else:
        facts.append(f"from {r.origin or '(not said: use current_location or ask)'} to {r.destination or '(not said: ask)'}")
        facts.append(plural(state.travellers, "traveller", "en"))
    if r.start is not None:
        nights = r.trip_nights
        end = f", back {r.end.isoformat()}" if r.end else ""
        facts.append(f"leaving {r.start.isoformat()}{end}" + (f", {plural(nights, 'night', 'en')}" if nights is not None else ""))
    elif r.month is not None:
        facts.append(f"in {r.month:%B %Y} (ask the day)")
    if r.clash is not None:
        facts.append(f"the person wrote '{r.clash.words}', but {r.clash.day.isoformat()} is another weekday: ask which day")
    for label, value in (("by", r.transport), ("seat", r.seat), ("budget CNY", r.budget), ("hotel near", r.landmark),
                         ("leave after", r.depart_after), ("leave before", r.depart_before),
                         ("come back after", r.return_after), ("come back before", r.return_before),
                         ("be there by", r.arrive_before)):
        if value is not None:
            facts.append(f"{label} {value:g}" if isinstance(value, float) else f"{label} {value}")
    if r.stars is not None:
        facts.append(f"hotel class {LEVEL_NAMES.get(r.stars, r.stars)} (hotel_search level_name)")
    if r.breakfast:
        facts.append("hotel with breakfast")
    if r.cheaper:
        facts.append("as cheap as possible")
    if r.one_way:
        facts.append("one way")
    if r.overnight is False:
        facts.append("no overnight rides (each ride arrives the day it leaves)")
    if r.home_stay:
        facts.append("staying with family: no hotel, no sightseeing, only the way there and back")
    if r.hard_seat is False:
        facts.append("no hard seat (硬座) or standing (无座)")
    lines = ["The trip on the table, read from the person's own words (their first request plus every change since):",
             "- " + "; ".join(facts)]
    if state.changes:
        lines.append("- changes asked since the first request: " + "; ".join(f"{c.name} {_v(c.before)} -> {_v(c.after)}"
                                                                            for c in state.changes))
    if state.refused is not None:
        lines.append(f"- the last message asked for a change that cannot be made ({state.refused.key}): say so, keep the plan")
    elif state.last is Said.REMARK and state.remark is not None:
        lines.append(f"- the last message is {_REMARKS[state.remark]}")
    elif state.last in _LAST:
        lines.append(f"- the last message is {_LAST[state.last]}")
    return "\n".join(lines)


def _v(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, tuple):
        return "[" + ", ".join(str(x) for x in value) + "]"
    return value.isoformat() if isinstance(value, date) else str(value)


class RequestNote:
    def __init__(self, gazetteer: Gazetteer) -> None:
        self.places = PlaceReader(gazetteer)

    def state(self, messages: Sequence[Message], today: date) -> RequestState:
        return read_state(read_transcript(messages), self.places, today)

    def text(self, messages: Sequence[Message], today: date) -> str | None:
        return describe(self.state(messages, today))
