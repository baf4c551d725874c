"""hotel_search: hotels in a city for a stay, with filters and distance to a landmark."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from tools.base import BaseTool, ToolContext, ToolResult
from tools.errors import ToolArgumentError
from tools.travel.common import DateStr, not_past, render, today
from tools.travel.geo import Gazetteer, haversine_km
from tools.travel.models import Hotel
from tools.travel.provider import HotelProvider

_STARS = {"二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "2": 2, "3": 3, "4": 4, "5": 5}


class HotelSearchParams(BaseModel):
    city_name: str = Field(description="Prefecture-level city, e.g. 杭州")
    checkin_date: DateStr | None = Field(default=None, description="YYYY-MM-DD; default today")
    checkout_date: DateStr | None = Field(default=None, description="YYYY-MM-DD, after checkin; default the day after")
    hotel_name: str | None = Field(default=None, description="part of the hotel name")
    brand_name: str | None = Field(default=None, description="e.g. 全季, 亚朵, 希尔顿")
    landmark: str | None = Field(default=None, description="a place to be near, e.g. 西湖 or 北京南站")
    distance_range: int | None = Field(default=None, gt=0, le=50000, description="metres from the landmark; default 3000")
    price_low: float | None = Field(default=None, ge=0, description="CNY per night")
    price_high: float | None = Field(default=None, ge=0, description="CNY per night")
    level_name: str | None = Field(default=None, description="经济型 / 舒适型 / 高档型 / 豪华型, or 五星 etc.")
    has_breakfast: Literal[0, 1] | None = Field(default=None, description="1 = breakfast included")

    @model_validator(mode="after")
    def _range(self) -> HotelSearchParams:
        if self.price_low is not None and self.price_high is not None and self.price_low > self.price_high:
            raise ValueError("price_low is above price_high")
        return self


class HotelSearch(BaseTool[HotelSearchParams]):
    name = "hotel_search"
    description = (
        "Search hotels in a city for a stay: hotel ids, names, brands, levels/stars, price per night and total "
        "in CNY, breakfast, rating, rooms left; with landmark (+ distance_range in metres) for 'near X'."
    )
    params_model = HotelSearchParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer, provider: HotelProvider, limit: int = 10) -> None:
        self._gaz = gazetteer
        self._provider = provider
        self._limit = limit

    async def execute(self, params: HotelSearchParams, ctx: ToolContext) -> ToolResult:
        city = self._gaz.resolve_city(params.city_name, field="city_name")
        checkin = not_past(params.checkin_date, ctx, "checkin_date") if params.checkin_date else today(ctx)
        checkout = date.fromisoformat(params.checkout_date) if params.checkout_date else checkin + timedelta(days=1)
        if checkout <= checkin:
            raise ToolArgumentError(
                f"checkout_date {checkout} must be at least one day after checkin_date {checkin}", field="checkout_date"
            )
        if (checkout - checkin).days > 30:
            raise ToolArgumentError("stays longer than 30 nights are not searched; split the stay", field="checkout_date")
        found = await self._provider.hotels(city, checkin, checkout)
        items = [h for h in found.items if self._keep(h, params)]
        extra: dict[str, object] = {"checkin_date": checkin.isoformat(), "checkout_date": checkout.isoformat()}
        if params.landmark:
            place = self._gaz.resolve_place(params.landmark, city, field="landmark")
            limit_m = params.distance_range or 3000
            near = []
            for h in items:
                d = round(haversine_km(place.lat, place.lon, h.lat, h.lon) * 1000)
                if d <= limit_m:
                    near.append(h.model_copy(update={"distance_m": d}))
            items = sorted(near, key=lambda h: (h.distance_m or 0, h.hotel_id))
            extra["landmark"] = place.name
        else:
            items.sort(key=lambda h: (-h.rating, h.price, h.hotel_id))
        if not items:
            extra["hint"] = "nothing matched; widen distance_range or the price range, or drop brand/level filters"
        return render(found, params, items, limit=self._limit,
                      summary=f"{len(items)} hotels in {city.name_zh} {checkin}..{checkout}", extra=extra)

    @staticmethod
    def _keep(h: Hotel, p: HotelSearchParams) -> bool:
        if p.hotel_name and p.hotel_name.strip() not in h.name:
            return False
        if p.brand_name and not any(b.strip() and (b.strip() in h.brand or h.brand in b) for b in p.brand_name.split(",")):
            return False
        if p.price_low is not None and h.price < p.price_low:
            return False
        if p.price_high is not None and h.price > p.price_high:
            return False
        if p.has_breakfast is not None and h.has_breakfast != bool(p.has_breakfast):
            return False
        if p.level_name:
            m = re.search(r"([二两三四五2-5])\s*星", p.level_name)
            if m:
                return h.stars == _STARS[m.group(1)]
            return p.level_name.strip().removesuffix("酒店") in h.level_name
        return True
