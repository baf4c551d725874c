"""ProviderFacts: a FactSource on the sandbox provider's lookups by id (get_train, get_flight,
get_hotel, get_poi) and its route planner: one record per plan item, no searching, so a whole
plan is re-checked in milliseconds."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

from agent_core.validator import wording_facts as W
from agent_core.validator.facts import HotelFact, PoiFact, RideFact, RideKind, RideMissing
from agent_core.validator.places import Locator, Spot
from tools.errors import ToolError
from tools.plan import HotelStay, Visit
from tools.travel.geo import Gazetteer
from tools.travel.models import Flight, Route, Train
from tools.travel.sandbox import SandboxProvider


class ProviderFacts:
    def __init__(self, provider: SandboxProvider, gazetteer: Gazetteer) -> None:
        self.provider = provider
        self.gazetteer = gazetteer
        self._cities: dict[str, str | None] = {}  # per instance: names repeat within a plan
        self.locator = Locator(gazetteer)

    def city_id(self, name: str) -> str | None:
        if not name:
            return None
        if name not in self._cities:
            cid: str | None
            try:
                cid = self.gazetteer.resolve_city(name).id
            except ToolError:
                cid = self._airport_city(name)
            self._cities[name] = cid
        return self._cities[name]

    def _airport_city(self, name: str) -> str | None:
        code = self._airport_code(name)
        airport = self.gazetteer.airport(code) if code else None
        return airport.city_id if airport else None

    def _airport_code(self, name: str) -> str | None:
        try:
            place = self.gazetteer.resolve_place(name)
        except ToolError:
            return None
        return place.id if place.kind == "airport" else None

    def _station(self, name: str) -> str | None:
        for candidate in (name.strip(), name.strip().removesuffix("站")):
            if self.gazetteer.station(candidate) is not None:
                return candidate
        return None

    async def ride(
        self, kind: RideKind, number: str, day: str, origin: str, destination: str, depart: str | None = None,
        *, origin_city: str | None = None, destination_city: str | None = None,
    ) -> RideFact | RideMissing:
        try:
            when = date.fromisoformat(day)
        except ValueError:
            return RideMissing(W.NOT_A_DATE(day=repr(day)))
        if kind == "train":
            return self._train(number, when, origin, destination)
        return self._flight(number, when, origin, destination)

    def _train(self, number: str, when: date, origin: str, destination: str) -> RideFact | RideMissing:
        whole = self.provider.get_train(number, when)
        if whole is None:
            return RideMissing(W.NO_TRAIN(number=number, when=when.isoformat()))
        a, b = self._station(origin), self._station(destination)
        found = self.provider.get_train(number, when, a, b) if a and b else None
        if found is None:
            # Stations of the same cities: the plan may have named the wrong one of them.
            calls = [whole.from_station, *whole.stops, whole.to_station]
            a2 = next((s for s in calls if self.city_id(s) == self.city_id(origin)), None)
            b2 = next((s for s in calls if self.city_id(s) == self.city_id(destination)), None)
            found = self.provider.get_train(number, when, a2, b2) if a2 and b2 else None
        if found is None:
            route = " → ".join([whole.from_station, *whole.stops, whole.to_station])
            return RideMissing(W.WRONG_STRETCH(number=number, when=when.isoformat(), route=route, origin=origin, destination=destination))
        return _train_fact(found, self.city_id)

    def _flight(self, number: str, when: date, origin: str, destination: str) -> RideFact | RideMissing:
        a, b = self._airport_code(origin), self._airport_code(destination)
        found = self.provider.get_flight(number, when, a, b) if a and b else None
        if found is None:
            found = self.provider.get_flight(number, when)
        if found is None:
            return RideMissing(W.NO_FLIGHT(number=number, when=when.isoformat()))
        return _flight_fact(found, self.city_id)

    async def hotel(self, stay: HotelStay) -> HotelFact | None:
        try:
            cin, cout = date.fromisoformat(stay.checkin_date), date.fromisoformat(stay.checkout_date)
        except ValueError:
            return None
        if cout <= cin:
            return None
        h = self.provider.get_hotel(stay.hotel_id, cin, cout)
        if h is None:
            return None
        return HotelFact(hotel_id=h.hotel_id, name=h.name, city=self.city_id(h.city) or h.city,
                         price_per_night=h.price, breakfast=h.has_breakfast, stars=h.stars)

    async def poi(self, visit: Visit) -> PoiFact | None:
        p = self.provider.get_poi(visit.poi_id)
        if p is None:
            return None
        return PoiFact(poi_id=p.poi_id, name=p.name, city=self.city_id(p.city) or p.city, price=p.ticket_price or 0.0,
                       hours=p.opening_hours, other_names=(p.name_en,) if p.name_en else ())

    async def transfer_minutes(self, city: str, origin: str, destination: str) -> int | None:
        route = self._route(city, origin, destination)
        rides = [m.duration_min for m in route.modes if m.mode in ("taxi", "drive", "transit")] if route else []
        return min(rides) if rides else None

    async def local_fare(self, city: str, origin: str, destination: str, mode: str) -> float | None:
        route = self._route(city, origin, destination)
        fares = [m.cost for m in route.modes if m.mode == mode and m.cost > 0] if route else []
        return min(fares) if fares else None

    def spot(self, name: str, city: str | None = None) -> Spot | None:
        return self.locator.spot(name, city)

    async def route_km(self, city: str, origin: str, destination: str) -> float | None:
        route = self._route(city, origin, destination)
        return min((m.distance_km for m in route.modes), default=None) if route else None

    def _route(self, city: str, origin: str, destination: str) -> Route | None:
        try:
            where = self.gazetteer.city(city)
            a = self.gazetteer.resolve_place(origin, where)
            b = self.gazetteer.resolve_place(destination, where)
        except (ToolError, KeyError):
            return None
        return self.provider.routes.plan(a, b, where)


def _train_fact(t: Train, city_id: Callable[[str], str | None]) -> RideFact:
    return RideFact(
        kind="train", number=t.number, origin=t.from_station, destination=t.to_station,
        origin_city=city_id(t.from_city) or "", destination_city=city_id(t.to_city) or "",
        depart=t.depart, arrive=t.arrive, fares={s.seat: s.price for s in t.seats},
        stops=(t.from_station, *t.stops, t.to_station),
    )


def _flight_fact(f: Flight, city_id: Callable[[str], str | None]) -> RideFact:
    return RideFact(
        kind="flight", number=f.number, origin=f.from_airport, destination=f.to_airport,
        origin_city=city_id(f.from_city) or "", destination_city=city_id(f.to_city) or "",
        depart=f.depart, arrive=f.arrive, fares={s.seat: s.price for s in f.cabins}, airline=f.airline,
        stops=(f.from_airport_code, f.to_airport_code),
    )

