"""current_location: where the person is, from a shared location or the configured home city."""

from __future__ import annotations

import json

from pydantic import BaseModel

from tools.base import BaseTool, ToolContext, ToolResult
from tools.travel.geo import Gazetteer


class CurrentLocationParams(BaseModel):
    pass


class CurrentLocation(BaseTool[CurrentLocationParams]):
    name = "current_location"
    description = (
        "Where the person is now: the location they shared (Telegram location, browser geolocation) with the "
        "nearest city, or else the configured home city. The result says which."
    )
    params_model = CurrentLocationParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer) -> None:
        self._gaz = gazetteer

    async def execute(self, params: CurrentLocationParams, ctx: ToolContext) -> ToolResult:
        if ctx.location is not None:
            city, km = self._gaz.nearest_city(ctx.location.latitude, ctx.location.longitude)
            payload: dict[str, object] = {
                "source": "shared_location",
                "note": "the person shared this location",
                "lat": ctx.location.latitude,
                "lon": ctx.location.longitude,
                "label": ctx.location.label,
                "city": city.name_zh,
                "city_en": city.name_en,
                "distance_to_city_km": round(km, 1),
            }
            summary = f"shared location near {city.name_zh}"
        else:
            try:
                city = self._gaz.resolve_city(ctx.home_city)
            except Exception:  # a misconfigured home city must not break the tool
                payload = {"source": "home_city", "note": "configured home city (BOT_HOME_CITY), not in the gazetteer",
                           "city": ctx.home_city}
                return ToolResult(output=json.dumps(payload, ensure_ascii=False), summary=f"home city {ctx.home_city}")
            payload = {
                "source": "home_city",
                "note": "the person shared no location; this is the configured home city (BOT_HOME_CITY). Ask if it matters.",
                "city": city.name_zh,
                "city_en": city.name_en,
                "lat": city.lat,
                "lon": city.lon,
            }
            summary = f"home city {city.name_zh}"
        return ToolResult(output=json.dumps({k: v for k, v in payload.items() if v is not None}, ensure_ascii=False,
                                            separators=(",", ":")), summary=summary)
