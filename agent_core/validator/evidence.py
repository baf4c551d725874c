"""What this run's tools returned: every train, flight, hotel and place in the tool results of
the conversation, read once, so each plan item can be held against the result it came from.

The travel tools print `{"source", ..., "results": [...]}` (tools/travel/common.render) whatever
the provider; records are recognised by their keys (a train has `from_station`, a flight
`from_airport`, a hotel `hotel_id`, a place `poi_id`; transfers carry their rides in `legs`), so
the search tools, nearby and along-the-route searches all count. Plain dicts are read rather
than validated models: a long conversation holds hundreds of records and this runs per review.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.schema import Message, Role

PLANNER_ONLY = frozenset({"ask_human", "submit_plan", "terminate"})


@dataclass(frozen=True, slots=True)
class SeenRide:
    kind: str  # "train" | "flight"
    number: str
    origin: str
    destination: str
    origin_city: str
    destination_city: str
    depart: str
    arrive: str
    fares: tuple[tuple[str, float], ...]  # (seat or cabin, price per person)
    airline: str | None
    tool: str


@dataclass(frozen=True, slots=True)
class SeenHotel:
    hotel_id: str
    name: str
    city: str
    price: float  # per room and night, for the searched dates
    checkin: str | None
    checkout: str | None
    breakfast: bool | None


@dataclass(frozen=True, slots=True)
class SeenPoi:
    poi_id: str
    name: str
    name_en: str
    city: str
    price: float
    tool: str


@dataclass(slots=True)
class RunEvidence:
    rides: dict[str, list[SeenRide]] = field(default_factory=lambda: defaultdict(list))  # NUMBER -> rides
    hotels: dict[str, list[SeenHotel]] = field(default_factory=lambda: defaultdict(list))
    pois: dict[str, SeenPoi] = field(default_factory=dict)
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # tool name -> answered calls

    @classmethod
    def from_messages(cls, messages: Sequence[Message]) -> RunEvidence:
        ev = cls()
        names: dict[str, str] = {}
        for m in messages:
            if m.role is Role.ASSISTANT:
                for tc in m.tool_calls or ():
                    names[tc.id] = tc.function.name
            elif m.role is Role.TOOL and m.tool_call_id:
                tool = names.get(m.tool_call_id) or m.name or "tool"
                if tool in PLANNER_ONLY:
                    continue
                content = m.content or ""
                if content.startswith("Error:") or not content.lstrip().startswith("{"):
                    continue
                try:
                    data = json.loads(content)
                except json.JSONDecodeError:
                    continue
                ev.calls[tool] += 1
                ev._read(tool, data)
        return ev

    def _read(self, tool: str, data: Any) -> None:
        if not isinstance(data, dict):
            return
        items = data.get("results")
        if not isinstance(items, list):
            return
        checkin, checkout = _str(data.get("checkin_date")) or None, _str(data.get("checkout_date")) or None
        query = data.get("query")
        query = query if isinstance(query, dict) else {}
        checkin = checkin or _str(query.get("checkin_date")) or None
        checkout = checkout or _str(query.get("checkout_date")) or None
        for item in items:
            if isinstance(item, dict):
                self._record(tool, item, checkin, checkout)

    def _record(self, tool: str, d: dict[str, Any], checkin: str | None, checkout: str | None) -> None:
        legs = d.get("legs")
        if isinstance(legs, list):  # a transfer: its rides are what a plan cites
            for leg in legs:
                if isinstance(leg, dict):
                    self._record(tool, leg, checkin, checkout)
            return
        number = _str(d.get("number"))
        if number and "from_station" in d:
            self._ride("train", tool, number, d, "from_station", "to_station", d.get("seats"))
        elif number and "from_airport" in d:
            self._ride("flight", tool, number, d, "from_airport", "to_airport", d.get("cabins"), d.get("price"))
        elif hotel_id := _str(d.get("hotel_id")):
            self.hotels[hotel_id].append(SeenHotel(
                hotel_id=hotel_id, name=_str(d.get("name")), city=_str(d.get("city")), price=_num(d.get("price")),
                checkin=checkin, checkout=checkout,
                breakfast=d.get("has_breakfast") if isinstance(d.get("has_breakfast"), bool) else None,
            ))
        elif poi_id := _str(d.get("poi_id")):
            self.pois.setdefault(poi_id, SeenPoi(
                poi_id=poi_id, name=_str(d.get("name")), name_en=_str(d.get("name_en")), city=_str(d.get("city")),
                price=_num(d.get("ticket_price")), tool=tool,
            ))

    def _ride(self, kind: str, tool: str, number: str, d: dict[str, Any], a: str, b: str, seats: Any, price: Any = None) -> None:
        fares = tuple((_str(s.get("seat")), _num(s.get("price"))) for s in seats or () if isinstance(s, dict))
        if not fares and isinstance(price, int | float):
            fares = (("", float(price)),)
        self.rides[number.upper()].append(SeenRide(
            kind=kind, number=number, origin=_str(d.get(a)), destination=_str(d.get(b)),
            origin_city=_str(d.get("from_city")), destination_city=_str(d.get("to_city")),
            depart=_str(d.get("depart")), arrive=_str(d.get("arrive")), fares=fares,
            airline=_str(d.get("airline")) or None, tool=tool,
        ))

    # -- questions the checks ask --------------------------------------------------------------
    def rides_of(self, number: str) -> list[SeenRide]:
        return self.rides.get(number.upper(), [])

    def numbers(self, kind: str) -> list[str]:
        seen: dict[str, None] = {}
        for rides in self.rides.values():
            for r in rides:
                if r.kind == kind:
                    seen.setdefault(r.number)
        return list(seen)

    def hotels_of(self, hotel_id: str) -> list[SeenHotel]:
        return self.hotels.get(hotel_id, [])

    def hotel_names(self) -> list[tuple[str, SeenHotel]]:
        return [(h.name, h) for hs in self.hotels.values() for h in hs]

    def called(self, tools: Iterable[str]) -> bool:
        return any(self.calls.get(t) for t in tools)


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
