"""What a travel data provider offers. The sandbox implements all of it; live providers
implement one capability each and the rest falls back to the sandbox (see factory.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Protocol

from tools.travel.geo import City, Place
from tools.travel.models import (
    Flight,
    FlightTransfer,
    Found,
    Hotel,
    PlaceHit,
    Route,
    Train,
    TrainTransfer,
    WebHit,
)

if TYPE_CHECKING:
    from tools.travel.live.telecodes import StationTable


@dataclass(frozen=True, slots=True)
class TrainQuery:
    origin: City
    destination: City
    day: date
    from_stations: tuple[str, ...]  # the stations asked for; all of the city's when a city was named
    to_stations: tuple[str, ...]
    exact_from: bool = False  # a station was named (北京南), not a city (北京)
    exact_to: bool = False


@dataclass(frozen=True, slots=True)
class FlightQuery:
    origin: City
    destination: City
    day: date
    from_airports: tuple[str, ...]  # IATA codes
    to_airports: tuple[str, ...]


class TrainProvider(Protocol):
    async def trains(self, q: TrainQuery) -> Found[Train]: ...

    async def train_transfers(self, q: TrainQuery, middle: City | None, limit: int) -> Found[TrainTransfer]: ...


class FlightProvider(Protocol):
    async def flights(self, q: FlightQuery) -> Found[Flight]: ...

    async def flight_transfers(self, q: FlightQuery, limit: int) -> Found[FlightTransfer]: ...


class HotelProvider(Protocol):
    async def hotels(self, city: City, checkin: date, checkout: date) -> Found[Hotel]: ...


class PlaceProvider(Protocol):
    async def places(self, query: str, city: City | None, limit: int) -> Found[PlaceHit]: ...

    async def around(self, center: Place, radius_m: int, keyword: str | None, limit: int) -> Found[PlaceHit]: ...


class RouteProvider(Protocol):
    async def route(self, origin: Place, destination: Place, city: City) -> Found[Route]: ...


class WebProvider(Protocol):
    async def search(self, query: str, limit: int) -> Found[WebHit]: ...


@dataclass(frozen=True, slots=True)
class TravelProviders:
    """One provider per capability; built by make_provider()."""

    trains: TrainProvider
    flights: FlightProvider
    hotels: HotelProvider
    places: PlaceProvider
    routes: RouteProvider
    web: WebProvider
    mode: str = "sandbox"
    # the official railway station table (live data): train_search finds stations the map lacks in it
    stations: StationTable | None = None
