"""train_search: trains between two cities or stations on a date, direct or with one transfer."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from tools.base import BaseTool, ToolContext, ToolResult
from tools.errors import ToolArgumentError
from tools.travel.common import DateStr, TimeStr, moment, not_past, parse_dt, render
from tools.travel.errors import UnknownCityError
from tools.travel.geo import City, Gazetteer
from tools.travel.live.telecodes import RailStation, StationTable
from tools.travel.models import Train
from tools.travel.provider import TrainProvider, TrainQuery

SeatName = Literal["商务座", "一等座", "二等座", "硬座", "软座", "硬卧", "软卧"]


class TrainSearchParams(BaseModel):
    depart_station: str = Field(description="Departure city or station, e.g. 北京 or 北京南")
    arrive_station: str = Field(description="Arrival city or station, e.g. 上海 or 上海虹桥")
    depart_date: DateStr = Field(description="YYYY-MM-DD")
    is_transfer: Literal[0, 1] = Field(default=0, description="1 = trains with one change, 0 = direct trains")
    depart_time_earliest: TimeStr | None = Field(default=None, description="e.g. 2025-01-01 07:00 (or 07:00)")
    depart_time_latest: TimeStr | None = Field(default=None, description="e.g. 2025-01-01 12:00 (or 12:00)")
    arrive_time_latest: TimeStr | None = Field(default=None, description="e.g. 2025-01-01 18:00 (or 18:00)")
    max_price: float | None = Field(default=None, ge=0, description="highest fare in CNY for one seat")
    seat_name: SeatName | None = Field(default=None, description="seat class")
    middle_station_name: str | None = Field(default=None, description="where to change, when is_transfer=1")


class TrainSearch(BaseTool[TrainSearchParams]):
    name = "train_search"
    description = (
        "Search Chinese railway trains (G/D high-speed, Z/T/K conventional) between two cities or stations "
        "on a date, with times, stops, seat classes, fares and seats left. Use is_transfer=1 for journeys "
        "with one change (optionally via middle_station_name); never split a transfer into two searches."
    )
    params_model = TrainSearchParams
    read_only = True

    def __init__(self, gazetteer: Gazetteer, provider: TrainProvider, limit: int = 12,
                 stations: StationTable | None = None) -> None:
        """`stations`: the official station table (live data), for stations the map does not know."""
        self._gaz = gazetteer
        self._provider = provider
        self._limit = limit
        self._stations = stations

    def _endpoint(self, name: str, field: str) -> tuple[City, tuple[str, ...], bool]:
        """The city, the stations to ask for, and whether `name` named one station (not a city)."""
        city, station = self._resolve(name, field)
        if not city.stations:
            raise ToolArgumentError(
                f"{city.name_zh} has no railway station in the railway data; try flight_search", field=field
            )
        return city, (station,) if station else city.stations, station is not None

    def _resolve(self, name: str, field: str) -> tuple[City, str | None]:
        """The city, and the station when `name` names one: the map's stations first, then the
        official table's (北京丰台, "Baoding East", and 珠海机场, which the map would read as 珠海)."""
        station = self._gaz.resolve_station(name)
        if station is not None:
            return self._gaz.city(station.city_id), station.name
        try:
            city = self._gaz.resolve_city(name, field=field)
        except UnknownCityError:
            found = self._stations.find(name) if self._stations is not None else None
            official = self._city_of(found) if found is not None else None
            if found is None or official is None:
                raise
            return official, found.name
        exact = self._stations.by_name(name) if self._stations is not None else None
        if exact is not None and exact.name != city.name_zh and (in_city := self._city_of(exact)) is not None \
                and in_city.id == city.id:
            return city, exact.name
        return city, None

    def _city_of(self, station: RailStation) -> City | None:
        """The map's city of a station of the official table (None: a city the map does not know)."""
        try:
            return self._gaz.resolve_city(station.city)
        except UnknownCityError:
            return None

    async def execute(self, params: TrainSearchParams, ctx: ToolContext) -> ToolResult:
        day = not_past(params.depart_date, ctx, "depart_date")
        origin, froms, exact_from = self._endpoint(params.depart_station, "depart_station")
        dest, tos, exact_to = self._endpoint(params.arrive_station, "arrive_station")
        if origin.id == dest.id:
            raise ToolArgumentError("departure and arrival are in the same city; use route_plan for trips inside a city")
        q = TrainQuery(origin, dest, day, froms, tos, exact_from=exact_from, exact_to=exact_to)
        now = ctx.now.replace(tzinfo=None)
        if params.is_transfer:
            middle = None
            if params.middle_station_name:
                middle, _, _ = self._endpoint(params.middle_station_name, "middle_station_name")
            found_t = await self._provider.train_transfers(q, middle, self._limit * 2)
            items_t = [t for t in found_t.items if self._keep(t.legs[0], params, now)
                       and self._keep_arrival(t.legs[-1], params) and self._fits_price(t.legs, params)]
            label = f"{len(items_t)} transfer options {origin.name_zh}->{dest.name_zh} {day}"
            hint = {} if items_t or "not_on_sale_until" in found_t.extra else {
                "hint": "nothing matched; relax the limits or name another middle_station_name"}
            return render(found_t, params, items_t, limit=self._limit, summary=label, extra=hint)
        found = await self._provider.trains(q)
        items = [t for t in found.items if self._keep(t, params, now) and self._keep_arrival(t, params)
                 and self._fits_price([t], params)]
        label = f"{len(items)} trains {origin.name_zh}->{dest.name_zh} {day}"
        hint = {} if items or "not_on_sale_until" in found.extra else {
            "hint": "nothing matched; relax the time or price limits, try is_transfer=1, or flight_search"}
        return render(found, params, items, limit=self._limit, summary=label, extra=hint)

    def _keep(self, t: Train, p: TrainSearchParams, now: datetime) -> bool:
        dep = parse_dt(t.depart)
        if dep < now:
            return False  # already gone
        day = dep.date()
        if p.depart_time_earliest and dep < moment(p.depart_time_earliest, day):
            return False
        return not (p.depart_time_latest and dep > moment(p.depart_time_latest, day))

    @staticmethod
    def _keep_arrival(t: Train, p: TrainSearchParams) -> bool:
        if not p.arrive_time_latest:
            return True
        return parse_dt(t.arrive) <= moment(p.arrive_time_latest, parse_dt(t.depart).date())

    @staticmethod
    def _fits_price(legs: list[Train], p: TrainSearchParams) -> bool:
        total = 0.0
        for leg in legs:
            price = leg.cheapest(p.seat_name)
            if price is None:
                return False  # sold out in that class
            total += price
        return p.max_price is None or total <= p.max_price
