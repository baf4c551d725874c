"""route_plan: distance, time and cost between two places in a city, by taxi, car, transit and on foot."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tools.base import BaseTool, ToolContext, ToolResult
from tools.errors import ToolArgumentError
from tools.travel.common import render
from tools.travel.errors import UnknownPlaceError
from tools.travel.geo import City, Gazetteer, Place, haversine_km
from tools.travel.provider import RouteProvider


class RoutePlanParams(BaseModel):
    origin: str = Field(min_length=1, description="Start: a place name, POI id, station, airport or 'lat,lon'")
    destination: str = Field(min_length=1, description="End: same forms as origin")
    city: str = Field(min_length=1, description="The city both places are in")
    mode: Literal["taxi", "drive", "transit", "walk"] | None = Field(default=None, description="only this mode")


def _other_city(gaz: Gazetteer, text: str) -> Place | None:
    try:
        return gaz.resolve_place(text)
    except UnknownPlaceError:
        return None


class RoutePlan(BaseTool[RoutePlanParams]):
    name = "route_plan"
    description = (
        "Plan a trip between two places in the same city: distance, driving time, taxi fare, public transit "
        "and walking time. Use it for every local transfer (station to hotel, hotel to sight)."
    )
    params_model = RoutePlanParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer, provider: RouteProvider) -> None:
        self._gaz = gazetteer
        self._provider = provider

    def _place(self, text: str, city: City, field: str) -> Place:
        try:
            return self._gaz.resolve_place(text, city, field=field)
        except UnknownPlaceError:
            elsewhere = _other_city(self._gaz, text)
            if elsewhere is None or elsewhere.city_id is None or elsewhere.city_id == city.id:
                raise
            other = self._gaz.city(elsewhere.city_id).name_zh
            raise ToolArgumentError(
                f"{elsewhere.name} is in {other}, not in {city.name_zh}; route_plan is for trips inside one city, "
                "use train_search or flight_search between cities", field=field,
            ) from None

    async def execute(self, params: RoutePlanParams, ctx: ToolContext) -> ToolResult:
        city = self._gaz.resolve_city(params.city, field="city")
        a = self._place(params.origin, city, "origin")
        b = self._place(params.destination, city, "destination")
        if haversine_km(a.lat, a.lon, city.lat, city.lon) > 150 or haversine_km(b.lat, b.lon, city.lat, city.lon) > 150:
            raise ToolArgumentError(
                f"{a.name} or {b.name} is not in {city.name_zh}; route_plan is for trips inside one city, "
                "use train_search or flight_search between cities"
            )
        found = await self._provider.route(a, b, city)
        routes = found.items
        if params.mode:
            routes = [r.model_copy(update={"modes": [m for m in r.modes if m.mode == params.mode]}) for r in routes]
        best = routes[0].modes[0] if routes and routes[0].modes else None
        summary = f"{a.name}->{b.name}: " + (f"{best.distance_km} km, {best.duration_min} min" if best else "no route")
        return render(found, params, routes, limit=3, summary=summary)
