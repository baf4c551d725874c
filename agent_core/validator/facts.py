"""Where the checks get their facts: a lookup of each plan item by its number or id.

The plan names items the way the tools returned them (train and flight numbers, hotel and POI
ids); a `FactSource` finds the same item again and says what the tools hold for it today.
Implementation: `ToolFacts`, which asks the travel tools again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agent_core.validator.places import Spot
from agent_core.validator.wording import Text
from tools.plan import HotelStay, Visit
from tools.travel.geo import Gazetteer

RideKind = Literal["train", "flight"]


@dataclass(frozen=True, slots=True)
class RideFact:
    """One train or flight on one day, for the segment the plan rides (origin -> destination)."""

    kind: RideKind
    number: str
    origin: str  # station or airport where the segment starts
    destination: str
    origin_city: str  # city id
    destination_city: str
    depart: str  # "YYYY-MM-DD HH:MM" local
    arrive: str
    fares: Mapping[str, float] = field(default_factory=dict)  # seat or cabin -> price per person, CNY
    airline: str | None = None
    stops: tuple[str, ...] = ()  # every station/airport it calls at, for the evidence line


@dataclass(frozen=True, slots=True)
class RideMissing:
    """The ride could not be found as the plan states it; `reason` is the evidence."""

    reason: Text


@dataclass(frozen=True, slots=True)
class HotelFact:
    hotel_id: str
    name: str
    city: str  # city id
    price_per_night: float  # per room, CNY, for the stay's dates
    breakfast: bool | None = None
    other_names: tuple[str, ...] = ()  # e.g. the English name
    stars: int | None = None  # the hotel's class (2 budget ... 5 luxury)


@dataclass(frozen=True, slots=True)
class PoiFact:
    poi_id: str
    name: str
    city: str  # city id
    price: float
    hours: str = ""  # as the tools give it, e.g. "08:30-17:00 周一闭馆"
    other_names: tuple[str, ...] = ()


class FactSource(Protocol):
    gazetteer: Gazetteer  # the map the names are read against (also for the person's words)

    def city_id(self, name: str) -> str | None:
        """The id of a city, station or airport name; None when unknown."""

    async def ride(
        self, kind: RideKind, number: str, day: str, origin: str, destination: str, depart: str | None = None,
        *, origin_city: str | None = None, destination_city: str | None = None,
    ) -> RideFact | RideMissing:
        """The ride `number` departing on `day` ("YYYY-MM-DD") between the two places; `depart`
        is the time the plan states, a hint for sources that search rather than look up, and
        the plan's cities another (a place the map does not know, e.g. a 12306 station code).

        When it runs that day but not between those exact stations/airports, the fact for the
        stops it does have in the same cities is returned, so the mismatch can be named."""

    async def hotel(self, stay: HotelStay) -> HotelFact | None:
        """The hotel `stay.hotel_id` for the stay's dates; None when no such hotel exists."""

    async def poi(self, visit: Visit) -> PoiFact | None:
        """The place `visit.poi_id`; None when no such place exists."""

    async def transfer_minutes(self, city: str, origin: str, destination: str) -> int | None:
        """Door-to-door minutes between two places in one city (route_plan); None when unknown."""

    async def local_fare(self, city: str, origin: str, destination: str, mode: str) -> float | None:
        """What route_plan gives as the fare of a `mode` ride ("taxi": the car; "transit": one
        person) between two places in one city, CNY; None when it gives none."""

    def spot(self, name: str, city: str | None = None) -> Spot | None:
        """Where a station, airport, sight or city is on the map; None when not known exactly."""

    async def route_km(self, city: str, origin: str, destination: str) -> float | None:
        """The shortest distance route_plan knows between two places in one city; None when unknown."""
