"""ToolFacts: a FactSource that re-queries the travel tools themselves, through their public
contract (train_search, flight_search, hotel_search, poi_search, route_plan), so the same checks
hold for the sandbox and for live providers. Tool outputs are read with the offline planner's
lenient readers, which know the field names the tools use."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from agent_core.offline.options import read_hotels, read_sights
from agent_core.validator import wording_facts as W
from agent_core.validator.facts import HotelFact, PoiFact, RideFact, RideKind, RideMissing
from agent_core.validator.items import same_place
from agent_core.validator.places import Locator, Spot
from agent_core.validator.tool_rides import ToolRide, flight_rides, train_rides
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
        self.locator = Locator(gazetteer)

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

    async def ride(self, kind: RideKind, number: str, day: str, origin: str, destination: str, depart: str | None = None,
                   *, origin_city: str | None = None, destination_city: str | None = None) -> RideFact | RideMissing:
        """Looked up by its number. The search tools take no number and show one page of what
        they matched, so every departure of the day is read: a window around the stated time
        first (one call when the plan is right), then the whole day; a window whose page is
        cut ("matched" above "shown") is split in two until every result has been shown, so a
        real later train on a busy line never falls off the page. A ride stated a little off
        its real time is still found, and named. The plan's cities are the last resort, for a
        station the tool showed by its 12306 code."""
        if kind == "train":
            attempts = [(origin, destination), (self._city_name(origin), self._city_name(destination))]
        else:
            attempts = [(self._city_name(origin), self._city_name(destination))]
        if origin_city and destination_city:
            attempts.append((self._city_name(origin_city), self._city_name(destination_city)))
        attempts = list(dict.fromkeys(attempts))
        seen: list[Text] = []
        for a, b in attempts:
            search = _Search(self, kind, a, b, day, number)
            windows = [w for w in (_window_around(depart, day), (0, _LAST_MINUTE)) if w is not None]
            for lo, hi in windows:
                found = await search.window(lo, hi)
                if found is not None:
                    exact = [r for r in found if same_place(r.ride.origin, origin) and same_place(r.ride.destination, destination)]
                    return self._fact(kind, (exact or found)[0], a, b)
            if search.error:
                seen.append(as_is(search.error[:160]))
            else:
                numbers: Value = ", ".join(search.numbers()[:12]) or W.NOTHING()
                seen.append(W.SEARCHED(origin=a, destination=b, day=day, numbers=numbers))
        return RideMissing(W.NOT_SEARCHED(kind=ride_kind(kind), number=number, tool=f"{kind}_search", seen=tuple(seen)))

    def _fact(self, kind: RideKind, found: ToolRide, searched_from: str, searched_to: str) -> RideFact:
        """The cities are the place's own, else the city the tool named (北京 for 北京丰台), else the
        city searched (a station shown by its 12306 code is in the city the search asked for)."""
        r = found.ride
        fares = dict(r.seats) if r.seats else {r.seat or ("经济舱" if kind == "flight" else "二等座"): r.price}
        return RideFact(
            kind=kind, number=r.number, origin=r.origin, destination=r.destination,
            origin_city=self.city_id(r.origin) or self.city_id(found.origin_city) or self.city_id(searched_from) or "",
            destination_city=(self.city_id(r.destination) or self.city_id(found.destination_city)
                               or self.city_id(searched_to) or ""),
            depart=r.depart, arrive=r.arrive, fares=fares if found.fares_known else {}, airline=r.airline,
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
                                     price_per_night=h.price, breakfast=h.breakfast, stars=h.stars)
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

    async def local_fare(self, city: str, origin: str, destination: str, mode: str) -> float | None:
        """A fare of 0 is Amap's "no fare given" for transit, not a free ride."""
        data, _raw = await self._query("route_plan", {"origin": origin, "destination": destination,
                                                     "city": self.gazetteer.city(city).name_zh, "mode": mode})
        fares = [m.get("cost") for r in (data or {}).get("results", []) if isinstance(r, dict)
                 for m in r.get("modes", []) if isinstance(m, dict) and m.get("mode") == mode
                 and m.get("currency", "CNY") == "CNY"]
        known = [float(f) for f in fares if isinstance(f, int | float) and f > 0]
        return min(known) if known else None

    def spot(self, name: str, city: str | None = None) -> Spot | None:
        return self.locator.spot(name, city)

    async def route_km(self, city: str, origin: str, destination: str) -> float | None:
        data, _raw = await self._query("route_plan", {"origin": origin, "destination": destination, "city": self.gazetteer.city(city).name_zh})
        return _shortest(data, "distance_km")


_LAST_MINUTE = 23 * 60 + 59
_SPLIT_DEPTH = 10  # 1440 minutes halved ten times: windows of under two minutes


class _Search:
    """One ride number between two places on one day, read window by window."""

    def __init__(self, facts: ToolFacts, kind: RideKind, a: str, b: str, day: str, number: str) -> None:
        self.facts, self.kind, self.a, self.b, self.day, self.number = facts, kind, a, b, day, number.upper()
        self.rides: dict[tuple[str, str], ToolRide] = {}
        self.error: str | None = None

    def numbers(self) -> list[str]:
        rides = [r.ride for r in self.rides.values()]
        return sorted({r.number for r in rides}, key=lambda n: min(r.depart for r in rides if r.number == n))

    async def window(self, lo: int, hi: int, depth: int = 0) -> list[ToolRide] | None:
        """The rides of that number departing lo..hi (minutes of the day), or None."""
        if self.kind == "train":
            args: dict[str, Any] = {"depart_station": self.a, "arrive_station": self.b, "depart_date": self.day, "is_transfer": 0,
                                    "depart_time_earliest": f"{self.day} {_hhmm(lo)}", "depart_time_latest": f"{self.day} {_hhmm(hi)}"}
            data, raw = await self.facts._query("train_search", args)
            rides = train_rides(data) if data is not None else []
        else:
            args = {"departure_city_name": self.a, "arrival_city_name": self.b, "depart_date": self.day, "is_transfer": 0,
                    "depart_time_earliest": _hhmm(lo), "depart_time_latest": _hhmm(hi)}
            data, raw = await self.facts._query("flight_search", args)
            rides = flight_rides(data) if data is not None else []
        if data is None:
            if raw.startswith("Error:"):
                self.error = raw
            return None
        for r in rides:
            self.rides[(r.ride.number, r.ride.depart)] = r
        hits = [r for r in rides if r.ride.number.upper() == self.number]
        if hits:
            return hits
        matched, shown = data.get("matched"), data.get("shown")
        cut = isinstance(matched, int) and isinstance(shown, int) and matched > shown
        if not cut or hi - lo < 2 or depth >= _SPLIT_DEPTH:
            return None
        mid = (lo + hi) // 2
        return await self.window(lo, mid, depth + 1) or await self.window(mid + 1, hi, depth + 1)


def _window_around(depart: str | None, day: str) -> tuple[int, int] | None:
    """An hour either side of the stated departure, within the day."""
    if not depart or not depart.startswith(day):
        return None
    try:
        moment = datetime.strptime(depart[:16], "%Y-%m-%d %H:%M")
    except ValueError:
        return None
    minute = moment.hour * 60 + moment.minute
    return max(0, minute - 60), min(_LAST_MINUTE, minute + 60)


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


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


def _shortest(data: Any, key: str) -> float | None:
    """The smallest value of `key` anywhere in a tool answer."""
    found: list[float] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key and isinstance(v, int | float):
                    found.append(float(v))
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(data)
    return min(found) if found else None
