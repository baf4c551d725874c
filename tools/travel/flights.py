"""flight_search: flights between two cities on a date, direct or with one connection."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from tools.base import BaseTool, ToolContext, ToolResult
from tools.errors import ToolArgumentError
from tools.travel.common import DateStr, TimeStr, minutes_of, not_past, parse_dt, render
from tools.travel.geo import Airport, City, Gazetteer, normalize
from tools.travel.models import Flight
from tools.travel.provider import FlightProvider, FlightQuery


class FlightSearchParams(BaseModel):
    departure_city_name: str = Field(description="Full city name, e.g. 上海市 or Tokyo")
    arrival_city_name: str = Field(description="Full city name, e.g. 北京市")
    depart_date: DateStr = Field(description="YYYY-MM-DD")
    is_transfer: Literal[0, 1] = Field(default=0, description="1 = connecting flights, 0 = direct")
    depart_time_earliest: TimeStr | None = Field(default=None, description="HH:MM")
    depart_time_latest: TimeStr | None = Field(default=None, description="HH:MM")
    airline_name: str | None = Field(default=None, description="short names, comma-separated: 中国国航,东方航空")
    departure_airport_name: str | None = Field(default=None, description="e.g. 大兴 or PKX")
    arrival_airport_name: str | None = Field(default=None, description="e.g. 虹桥 or SHA")
    min_sale_price: float | None = Field(default=None, ge=0, description="CNY")
    max_sale_price: float | None = Field(default=None, ge=0, description="CNY")

    @model_validator(mode="after")
    def _range(self) -> FlightSearchParams:
        if self.min_sale_price is not None and self.max_sale_price is not None and self.min_sale_price > self.max_sale_price:
            raise ValueError("min_sale_price is above max_sale_price")
        return self


class FlightSearch(BaseTool[FlightSearchParams]):
    name = "flight_search"
    description = (
        "Search flights between two cities on a date: flight numbers, airlines, airports, local departure and "
        "arrival times, duration and fares (in CNY; a fare converted from another currency keeps its original "
        "quote). is_transfer=1 searches connections through a hub."
    )
    params_model = FlightSearchParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer, provider: FlightProvider, limit: int = 12) -> None:
        self._gaz = gazetteer
        self._provider = provider
        self._limit = limit

    def _airports(self, city: City, wanted: str | None, field: str) -> tuple[str, ...]:
        airports = self._gaz.find_airports(city)
        if not airports:
            raise ToolArgumentError(f"{city.name_zh} has no airport in the data; try train_search or a nearby city", field=field)
        if not wanted:
            return tuple(a.iata for a in airports)
        key = normalize(wanted).removesuffix("机场").removesuffix("国际")

        def hit(a: Airport) -> bool:
            return key in (a.iata.lower(),) or key in normalize(a.name_zh) or key in normalize(a.name_en)

        chosen = tuple(a.iata for a in airports if hit(a))
        if not chosen:
            names = ", ".join(f"{a.name_zh} ({a.iata})" for a in airports)
            raise ToolArgumentError(f"{wanted!r} is not an airport of {city.name_zh}; its airports: {names}", field=field)
        return chosen

    async def execute(self, params: FlightSearchParams, ctx: ToolContext) -> ToolResult:
        day = not_past(params.depart_date, ctx, "depart_date")
        origin = self._gaz.resolve_city(params.departure_city_name, field="departure_city_name")
        dest = self._gaz.resolve_city(params.arrival_city_name, field="arrival_city_name")
        if origin.id == dest.id:
            raise ToolArgumentError("departure and arrival are the same city")
        q = FlightQuery(origin, dest, day,
                        self._airports(origin, params.departure_airport_name, "departure_airport_name"),
                        self._airports(dest, params.arrival_airport_name, "arrival_airport_name"))
        airlines = [a.strip() for a in (params.airline_name or "").replace("，", ",").split(",") if a.strip()]
        now = ctx.now.replace(tzinfo=None)
        if params.is_transfer:
            found_t = await self._provider.flight_transfers(q, self._limit * 2)
            items_t = [t for t in found_t.items if self._keep(t.legs[0], params, airlines, now, first=True)
                       and all(self._keep(leg, params, airlines, now, first=False) for leg in t.legs[1:])
                       and self._price_ok(t.price, t.currency, params)]
            return render(found_t, params, items_t, limit=self._limit,
                          summary=f"{len(items_t)} connections {origin.name_zh}->{dest.name_zh} {day}")
        found = await self._provider.flights(q)
        items = [f for f in found.items if self._keep(f, params, airlines, now, first=True) and self._price_ok(f.price, f.currency, params)]
        hint = {} if items else {"hint": "nothing matched; relax the filters, try is_transfer=1, or train_search"}
        return render(found, params, items, limit=self._limit,
                      summary=f"{len(items)} flights {origin.name_zh}->{dest.name_zh} {day}", extra=hint)

    @staticmethod
    def _keep(f: Flight, p: FlightSearchParams, airlines: list[str], now: datetime, *, first: bool) -> bool:
        if airlines and not any(a in f.airline or f.airline in a or a.upper() == f.number[:2] for a in airlines):
            return False
        if not first:
            return True
        dep = parse_dt(f.depart)
        if dep < now:
            return False  # already gone
        minute = dep.hour * 60 + dep.minute
        if p.depart_time_earliest and minute < minutes_of(p.depart_time_earliest):
            return False
        return not (p.depart_time_latest and minute > minutes_of(p.depart_time_latest))

    @staticmethod
    def _price_ok(price: float, currency: str, p: FlightSearchParams) -> bool:
        """min/max_sale_price are CNY; providers convert what they can. A fare still in another
        currency (no rate known) is kept, and the provider's caveat says the limits were not applied."""
        if currency != "CNY":
            return True
        return (p.min_sale_price is None or price >= p.min_sale_price) and (p.max_sale_price is None or price <= p.max_sale_price)
