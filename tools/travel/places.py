"""poi_search and poi_around_search: places by description, and places around a point."""

from __future__ import annotations

from pydantic import BaseModel, Field

from tools.base import BaseTool, ToolContext, ToolResult
from tools.travel.common import render
from tools.travel.geo import City, Gazetteer
from tools.travel.provider import PlaceProvider


class PoiSearchParams(BaseModel):
    query: str = Field(min_length=1, description="What to find, e.g. 故宫, 上海外滩, 西湖附近的博物馆")
    city: str | None = Field(default=None, description="Optional city to search in")


class PoiSearch(BaseTool[PoiSearchParams]):
    name = "poi_search"
    description = (
        "Find places (sights, museums, stations, airports, shopping) by name or description, with POI ids, "
        "coordinates, opening hours, typical visit length and ticket price. Several matches may come back: "
        "then ask the person which one they mean."
    )
    params_model = PoiSearchParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer, provider: PlaceProvider, limit: int = 10) -> None:
        self._gaz = gazetteer
        self._provider = provider
        self._limit = limit

    async def execute(self, params: PoiSearchParams, ctx: ToolContext) -> ToolResult:
        city: City | None = self._gaz.resolve_city(params.city, field="city") if params.city else None
        found = await self._provider.places(params.query.strip(), city, self._limit)
        extra = {} if found.items else {"hint": "nothing matched; try a shorter name, or name the city"}
        return render(found, params, found.items, limit=self._limit,
                      summary=f"{len(found.items)} places for {params.query.strip()[:30]}", extra=extra)


class PoiAroundParams(BaseModel):
    location: str = Field(min_length=1, description="A place name, POI id, station, or 'lat,lon'")
    keyword: str | None = Field(default=None, description="What to look for, e.g. 餐厅, 博物馆, 咖啡")
    radius: int = Field(default=1000, gt=0, le=20000, description="metres")
    city: str | None = Field(default=None, description="Optional city of the location")


class PoiAroundSearch(BaseTool[PoiAroundParams]):
    name = "poi_around_search"
    description = "Find places around a point (a place name, POI id, station or 'lat,lon'), nearest first, with distances in metres."
    params_model = PoiAroundParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer, provider: PlaceProvider, limit: int = 10) -> None:
        self._gaz = gazetteer
        self._provider = provider
        self._limit = limit

    async def execute(self, params: PoiAroundParams, ctx: ToolContext) -> ToolResult:
        city = self._gaz.resolve_city(params.city, field="city") if params.city else None
        center = self._gaz.resolve_place(params.location, city, field="location")
        found = await self._provider.around(center, params.radius, params.keyword, self._limit)
        extra: dict[str, object] = {"center": {"name": center.name, "lat": center.lat, "lon": center.lon}}
        if not found.items:
            extra["hint"] = "nothing within the radius; try a larger radius or another keyword"
        return render(found, params, found.items, limit=self._limit,
                      summary=f"{len(found.items)} places near {center.name}", extra=extra)
