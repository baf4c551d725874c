"""ToolFacts: a FactSource that re-queries the travel tools themselves, through their public
contract (train_search, flight_search, hotel_search, poi_search, route_plan), so the same checks
hold for the sandbox and for live providers. Tool outputs are read with the offline planner's
lenient readers, which know the field names the tools use."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from agent_core.offline.options import Ride, read_flights, read_hotels, read_sights, read_trains
from agent_core.validator import wording_facts as W
from agent_core.validator.facts import HotelFact, PoiFact, RideFact, RideKind, RideMissing
from agent_core.validator.items import same_place
from agent_core.validator.wording import Text, Value
from agent_core.validator.wording import kind as ride_kind
from agent_core.validator.wording import raw as as_is
from tools.base import ToolContext
from tools.collection import ToolCollection
from tools.errors import ToolError
from tools.plan import HotelStay, Visit
from tools.travel.geo import Gazetteer

_DURATION_KEYS = ("duration_min", "duration_minutes", "minutes", "time_min")


class ToolFacts:
    def __init__(self, tools: ToolCollection, gazetteer: Gazetteer, now: Callable[[], datetime]) -> None:
        self.tools = tools
        self.gazetteer = gazetteer
        self.now = now
        self._cities: dict[str, str | None] = {}  # per checker instance: names repeat within a plan

    def city_id(self, name: str) -> str | None:
        if not name:
            return None
        if name not in self._cities:
            try:
                self._cities[name] = self.gazetteer.resolve_city(name).id
            except ToolError:
                self._cities[name] = None
        return self._cities[name]

    def _city_name(self, name: str) -> str:
        cid = self.city_id(name)
        return self.gazetteer.city(cid).name_zh if cid else name

    async def _query(self, tool: str, args: dict[str, Any]) -> tuple[Any, str]:
        """(parsed JSON or None, the raw observation) of one tool call."""
        ctx = ToolContext(tool_call_id=f"validator-{tool}", now=self.now())
        result = await self.tools.execute(tool, args, ctx)
        if not result.ok:
            return None, result.observation()
        try:
            return json.loads(result.output), result.output
        except json.JSONDecodeError:
            return None, result.output

    async def ride(self, kind: RideKind, number: str, day: str, origin: str, destination: str, depart: str | None = None) -> RideFact | RideMissing:
        """Searched from an hour before the stated departure, since searches show a page of
        results: a ride stated a little off its real time is still found, and named."""
        earliest = _hour_before(depart, day)
        if kind == "train":
            attempts = [(origin, destination), (self._city_name(origin), self._city_name(destination))]
        else:
            attempts = [(self._city_name(origin), self._city_name(destination))]
        seen: list[Text] = []
        for a, b in attempts:
            if kind == "train":
                args: dict[str, Any] = {"depart_station": a, "arrive_station": b, "depart_date": day, "is_transfer": 0}
                if earliest:
                    args["depart_time_earliest"] = f"{day} {earliest}"
                data, raw = await self._query("train_search", args)
                rides = read_trains(data, day) if data is not None else []
            else:
                args = {"departure_city_name": a, "arrival_city_name": b, "depart_date": day, "is_transfer": 0}
                if earliest:
                    args["depart_time_earliest"] = earliest
                data, raw = await self._query("flight_search", args)
                rides = read_flights(data, day) if data is not None else []
            if data is None and raw.startswith("Error:"):
                seen.append(as_is(raw[:160]))
            matches = [r for r in rides if r.number.upper() == number.upper()]
            exact = [r for r in matches if same_place(r.origin, origin) and same_place(r.destination, destination)]
            if exact or matches:
                return self._fact(kind, (exact or matches)[0])
            numbers: Value = ", ".join(r.number for r in rides[:12]) or W.NOTHING()
            seen.append(W.SEARCHED_FROM(origin=a, destination=b, day=day, earliest=earliest, numbers=numbers) if earliest
                        else W.SEARCHED(origin=a, destination=b, day=day, numbers=numbers))
        return RideMissing(W.NOT_SEARCHED(kind=ride_kind(kind), number=number, tool=f"{kind}_search", seen=tuple(seen)))

    def _fact(self, kind: RideKind, r: Ride) -> RideFact:
        fares = dict(r.seats) if r.seats else {r.seat or ("经济舱" if kind == "flight" else "二等座"): r.price}
        return RideFact(
            kind=kind, number=r.number, origin=r.origin, destination=r.destination,
            origin_city=self.city_id(r.origin) or "", destination_city=self.city_id(r.destination) or "",
            depart=r.depart, arrive=r.arrive, fares=fares, airline=r.airline,
        )

    async def hotel(self, stay: HotelStay) -> HotelFact | None:
        """Searched where the plan says the hotel is, by name, then without the name (a model may
        shorten it): a hotel of another city is then not found, which is the finding."""
        city, hotel_id = stay.city, stay.hotel_id
        base = {"city_name": self._city_name(city), "checkin_date": stay.checkin_date, "checkout_date": stay.checkout_date}
        for args in ({**base, "hotel_name": stay.name}, base):
            data, _raw = await self._query("hotel_search", args)
            for h in read_hotels(data) if data is not None else []:
                if h.hotel_id == hotel_id:
                    return HotelFact(hotel_id=h.hotel_id, name=h.name, city=self.city_id(city) or "",
                                     price_per_night=h.price, breakfast=h.breakfast)
        return None

    async def poi(self, visit: Visit) -> PoiFact | None:
        p = self.gazetteer.poi(visit.poi_id)
        if p is None:
            return await self._poi_by_search(visit.poi_id, visit.city, visit.name)
        return PoiFact(poi_id=p.id, name=p.name_zh, city=p.city_id, price=p.price, hours=p.hours, other_names=(p.name_en,))

    async def _poi_by_search(self, poi_id: str, city: str, name: str) -> PoiFact | None:
        """Live providers' ids are not in the gazetteer: find the place again by its name."""
        data, _raw = await self._query("poi_search", {"query": f"{self._city_name(city)} {name}"})
        for s in read_sights(data) if data is not None else []:
            if s.poi_id == poi_id:
                return PoiFact(poi_id=s.poi_id, name=s.name, city=self.city_id(s.city or city) or "", price=s.price, hours=s.hours)
        return None

    async def transfer_minutes(self, city: str, origin: str, destination: str) -> int | None:
        data, _raw = await self._query("route_plan", {"origin": origin, "destination": destination, "city": self.gazetteer.city(city).name_zh})
        return _minutes(data)


def _hour_before(depart: str | None, day: str) -> str | None:
    if not depart or not depart.startswith(day):
        return None
    try:
        moment = datetime.strptime(depart[:16], "%Y-%m-%d %H:%M") - timedelta(hours=1)
    except ValueError:
        return None
    return None if moment.strftime("%Y-%m-%d") != day else moment.strftime("%H:%M")


def _minutes(data: Any) -> int | None:
    """The quickest door-to-door duration in a route_plan answer, whatever its nesting."""
    found: list[float] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k in _DURATION_KEYS and isinstance(v, int | float):
                    found.append(float(v))
                elif k == "duration_s" and isinstance(v, int | float):
                    found.append(v / 60)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data)
    return round(min(found)) if found else None
