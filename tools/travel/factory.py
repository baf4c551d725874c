"""Provider selection and the list of travel tools; bot.py calls these once at start-up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, Protocol, TypeVar

import httpx

from tools.base import BaseTool
from tools.travel.flights import FlightSearch
from tools.travel.geo import City, Gazetteer, Place
from tools.travel.hotels import HotelSearch
from tools.travel.live import (
    AmapProvider,
    DuffelFlights,
    LiveEndpoints,
    Rail12306,
    SearxngWeb,
    TavilyWeb,
)
from tools.travel.live.telecodes import StationTable
from tools.travel.location import CurrentLocation
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
from tools.travel.money import Rates
from tools.travel.places import PoiAroundSearch, PoiSearch
from tools.travel.provider import (
    FlightProvider,
    FlightQuery,
    PlaceProvider,
    RouteProvider,
    TrainQuery,
    TravelProviders,
    WebProvider,
)
from tools.travel.routes import RoutePlan
from tools.travel.sandbox import SandboxProvider
from tools.travel.trains import TrainSearch
from tools.travel.web import WebSearch

T = TypeVar("T")


class TravelConfig(Protocol):
    """The part of bot.settings.Settings that travel data needs."""

    # read-only properties: a settings object with narrower types (Literal) still fits
    @property
    def travel_data(self) -> str: ...
    @property
    def amap_key(self) -> str | None: ...
    @property
    def searxng_url(self) -> str | None: ...
    @property
    def tavily_api_key(self) -> str | None: ...
    @property
    def duffel_token(self) -> str | None: ...


def _noted(found: Found[T], note: str) -> Found[T]:
    # the plan must say which facts came from the sandbox and why
    return replace(found, note=f"{note}; {found.note}", caveats=[*found.caveats, f"sandbox data, not live: {note}"])


class SandboxFallback:
    """The sandbox standing in for a live provider that is not configured; says so in every answer."""

    def __init__(self, sandbox: SandboxProvider, note: str) -> None:
        self._s = sandbox
        self._note = note

    async def trains(self, q: TrainQuery) -> Found[Train]:
        return _noted(await self._s.trains.trains(q), self._note)

    async def train_transfers(self, q: TrainQuery, middle: City | None, limit: int) -> Found[TrainTransfer]:
        return _noted(await self._s.trains.train_transfers(q, middle, limit), self._note)

    async def flights(self, q: FlightQuery) -> Found[Flight]:
        return _noted(await self._s.flights.flights(q), self._note)

    async def flight_transfers(self, q: FlightQuery, limit: int) -> Found[FlightTransfer]:
        return _noted(await self._s.flights.flight_transfers(q, limit), self._note)

    async def hotels(self, city: City, checkin: date, checkout: date) -> Found[Hotel]:
        return _noted(await self._s.hotels.hotels(city, checkin, checkout), self._note)

    async def places(self, query: str, city: City | None, limit: int) -> Found[PlaceHit]:
        return _noted(await self._s.places.places(query, city, limit), self._note)

    async def around(self, center: Place, radius_m: int, keyword: str | None, limit: int) -> Found[PlaceHit]:
        return _noted(await self._s.places.around(center, radius_m, keyword, limit), self._note)

    async def route(self, origin: Place, destination: Place, city: City) -> Found[Route]:
        return _noted(await self._s.routes.route(origin, destination, city), self._note)

    async def search(self, query: str, limit: int) -> Found[WebHit]:
        return _noted(await self._s.web.search(query, limit), self._note)


def make_provider(
    config: TravelConfig,
    gazetteer: Gazetteer,
    sandbox: SandboxProvider | None = None,
    *,
    http: httpx.AsyncClient | None = None,
    endpoints: LiveEndpoints | None = None,
    clock: Callable[[], datetime] | None = None,
) -> TravelProviders:
    """Sandbox by default; with travel_data == "live", a live provider per capability whose key is
    set, and the sandbox (with a visible note) for each one that is not.

    `http` is the client the live providers share (the caller owns and closes it; one with
    sensible timeouts is made when none is given); `endpoints` overrides the services' base URLs
    (default: optional *_base_url settings fields, else the real services); `clock` is what the
    12306 provider takes as now for its sale window (default: the system clock)."""
    sb = sandbox or SandboxProvider(gazetteer)
    if config.travel_data != "live":
        return TravelProviders(trains=sb.trains, flights=sb.flights, hotels=sb.hotels, places=sb.places,
                               routes=sb.routes, web=sb.web, mode="sandbox")

    def fallback(what: str) -> SandboxFallback:
        return SandboxFallback(sb, f"live data was requested but {what}; showing sandbox data instead")

    client = http or httpx.AsyncClient(timeout=httpx.Timeout(20.0, connect=5.0),
                                       headers={"User-Agent": "travel-agent-bot/0.1"})
    urls = endpoints or LiveEndpoints.from_config(config)
    outside = fallback("this place is outside the live source's coverage")

    places: PlaceProvider
    routes: RouteProvider
    if config.amap_key:
        places = routes = AmapProvider(client, config.amap_key, gazetteer, base_url=urls.amap,
                                       outside_places=outside, outside_routes=outside)
    else:
        places = routes = fallback("AMAP_KEY is not set")
    web: WebProvider
    if config.searxng_url:
        web = SearxngWeb(client, config.searxng_url)
    elif config.tavily_api_key:
        web = TavilyWeb(client, config.tavily_api_key, base_url=urls.tavily)
    else:
        web = fallback("neither SEARXNG_URL nor TAVILY_API_KEY is set")
    flights: FlightProvider = (DuffelFlights(client, config.duffel_token, gazetteer, base_url=urls.duffel,
                                             rates=rates_of(config))
                               if config.duffel_token else fallback("DUFFEL_TOKEN is not set"))
    stations = StationTable.load()
    rail = Rail12306(client, gazetteer, stations=stations, base_url=urls.rail12306, clock=clock,
                     outside=fallback("12306 has no station for a city of this trip"))
    hotels = fallback("there is no live hotel provider")
    return TravelProviders(trains=rail, flights=flights, hotels=hotels, places=places, routes=routes, web=web,
                           mode="live", stations=stations)


def rates_of(config: object) -> Rates:
    """The rate table from an optional `fx_rates` setting ("GBP=9.80,...@2025-06-30"), else the default."""
    text = getattr(config, "fx_rates", None)
    return Rates.parse(str(text)) if text else Rates.default()


def build_travel_tools(gazetteer: Gazetteer, providers: TravelProviders) -> list[BaseTool[Any]]:
    return [
        TrainSearch(gazetteer, providers.trains, stations=providers.stations),
        FlightSearch(gazetteer, providers.flights),
        HotelSearch(gazetteer, providers.hotels),
        PoiSearch(gazetteer, providers.places),
        PoiAroundSearch(gazetteer, providers.places),
        RoutePlan(gazetteer, providers.routes),
        WebSearch(providers.web),
        CurrentLocation(gazetteer),
    ]


@dataclass(frozen=True)
class TravelSettings:
    """A plain TravelConfig for scripts, tests and benchmarks: the sandbox, no keys, by default."""

    travel_data: str = "sandbox"
    amap_key: str | None = None
    searxng_url: str | None = None
    tavily_api_key: str | None = None
    duffel_token: str | None = None
    fx_rates: str | None = None


def build_sandbox_tools(gazetteer: Gazetteer, sandbox: SandboxProvider | None = None) -> list[BaseTool[Any]]:
    """The eight travel tools on the sandbox, built the way bot.py builds them."""
    return build_travel_tools(gazetteer, make_provider(TravelSettings(), gazetteer, sandbox or SandboxProvider(gazetteer)))
