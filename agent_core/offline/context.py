"""What one decision of the offline planner sees: the conversation read back, the request state,
today, and the small helpers every step of the decision uses (asking, saying, finding a tool's
answer by the purpose its call id carries)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, Any

from agent_core.offline.state import RequestState
from agent_core.offline.texts import say
from agent_core.offline.transcript import ToolOutcome, Transcript, slot_of
from agent_core.offline.transcript import Turn as Heard
from agent_core.offline.turns import Call, Turn
from tools.travel.geo import City

if TYPE_CHECKING:
    from agent_core.offline.planner import OfflinePlanner

_RIDE_ITEM = re.compile(r"\b(?:legs|party\[\d+\][^\n]*?legs)\[\d+\]\s+(?P<n>[A-Z]{1,2}\d{1,5})\b")
_HOTEL_ITEM = re.compile(r"\((?P<id>H-[\w-]+)\)")
_POI_ITEM = re.compile(r"\((?P<id>POI-[\w-]+)\)")
_FACT = re.compile(r"^\s*-?\s*\[(?:fact mismatch|信息不真实)\]")


class Context:
    """One decision over one transcript (a fresh object per call, dropped afterwards)."""

    def __init__(self, planner: OfflinePlanner, t: Transcript, s: RequestState, today: date) -> None:
        self.p = planner
        self.t = t
        self.s = s
        self.req = s.request
        self.lang = s.lang
        self.today = today
        self.notes: list[str] = []
        self.wanted_pois: list[str] = list(s.wanted_pois)
        # what the Validator's notes since the last plan found wrong: left out of the next choice
        # (a fact that did not match is searched again instead: the tool's answer may have been stale)
        reviews = "\n".join(line for note in t.reviews for line in note.splitlines() if not _FACT.search(line))
        self.avoid_rides = {m.group("n") for m in _RIDE_ITEM.finditer(reviews)}
        self.avoid_hotels = {m.group("id") for m in _HOTEL_ITEM.finditer(reviews)}
        self.avoid_pois = {m.group("id") for m in _POI_ITEM.finditer(reviews)}

    def ask(self, slot: str, question: str, options: Sequence[str] = ()) -> Turn:
        args: dict[str, Any] = {"inquire": question}
        if options:
            args["options"] = list(options)[:10]
        return Turn(calls=[Call("ask_human", args, slot)])

    def say(self, key: str, **values: object) -> Turn:
        return Turn(text=say(key, self.lang, **values))

    def outcome(self, purpose: str) -> ToolOutcome | None:
        found = [o for o in self.t.phase if slot_of(o.call_id) == purpose]
        return found[-1] if found else None

    def asked(self, slot: str) -> int:
        return self.t.asks_in_phase.get(slot, 0)

    def answers_to(self, slot: str) -> list[Heard]:
        """The person's answers to this phase's questions for `slot`, in order (the phase: since
        their last message of their own)."""
        found: list[Heard] = []
        for turn in reversed(self.t.turns):
            if turn.slot is None:
                break
            if turn.slot == slot:
                found.append(turn)
        return found[::-1]

    def city_name(self, city: City) -> str:
        return city.name_zh if self.lang == "zh" else city.name_en
