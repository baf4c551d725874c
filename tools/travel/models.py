"""What providers return and tools print: compact, citable records with stable ids.

Times are local "YYYY-MM-DD HH:MM". Every price carries its currency (CNY unless a record says
otherwise; a price converted from another currency keeps the quote it came from). Every answer
records its source ("sandbox" or the live provider's name) and the caveats a plan must pass on:
what the tool could not know (trains not on sale yet, converted prices, a provider that failed,
facts from the sandbox instead of live data).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")


class Seat(BaseModel):
    seat: str  # 商务座 一等座 二等座 硬座 软座 硬卧 软卧 / 经济舱 公务舱 头等舱
    price: float
    left: int  # 0 = sold out (or not on sale yet, see Train.sale_opens)
    currency: str = "CNY"


class Train(BaseModel):
    number: str  # the stable id, e.g. G30
    type: str  # 高铁 动车 直达 特快 快速
    from_station: str
    to_station: str
    from_city: str
    to_city: str
    depart: str
    arrive: str
    duration_min: int
    distance_km: int
    stops: list[str]  # stations called at between from_station and to_station
    seats: list[Seat]
    sale_opens: str | None = None  # "YYYY-MM-DD HH:MM" when tickets are not on sale yet
    note: str | None = None  # what the source could not say about this train

    def cheapest(self, seat_name: str | None = None) -> float | None:
        """The lowest fare with seats left; for a train not on sale yet, the lowest listed fare
        (its seats are unknown until the sale opens, not sold out)."""
        prices = [s.price for s in self.seats if (s.left > 0 or self.sale_opens) and (seat_name is None or s.seat == seat_name)]
        return min(prices) if prices else None


class TrainTransfer(BaseModel):
    id: str  # "G30+G1234"
    middle_station: str
    wait_min: int
    total_min: int
    legs: list[Train]


class Flight(BaseModel):
    number: str  # the stable id, e.g. MU5101
    airline: str
    from_airport: str
    from_airport_code: str
    to_airport: str
    to_airport_code: str
    from_city: str
    to_city: str
    depart: str
    arrive: str
    duration_min: int
    aircraft: str
    price: float  # cheapest economy fare, in `currency`
    cabins: list[Seat]
    currency: str = "CNY"
    quoted: str | None = None  # the seller's own price when converted: "45.00 GBP = 441.00 CNY at 9.8 (...)"


class FlightTransfer(BaseModel):
    id: str  # "MU5101+MU2345"
    via_airport: str
    layover_min: int
    total_min: int
    price: float
    legs: list[Flight]
    currency: str = "CNY"
    quoted: str | None = None


class Hotel(BaseModel):
    hotel_id: str
    name: str
    brand: str
    city: str
    level_name: str  # 经济型 舒适型 高档型 豪华型
    stars: int
    address: str
    lat: float
    lon: float
    price: float  # per night, average over the stay
    nights: int
    total: float
    has_breakfast: bool
    rating: float
    rooms_left: int
    distance_m: int | None = None  # to the landmark asked for
    currency: str = "CNY"


class PlaceHit(BaseModel):
    poi_id: str
    name: str
    name_en: str = ""
    city: str
    category: str
    lat: float
    lon: float
    opening_hours: str = ""
    visit_min: int | None = None
    ticket_price: float | None = None
    address: str = ""
    distance_m: int | None = None
    currency: str | None = None  # of ticket_price, set with it


class RouteMode(BaseModel):
    mode: str  # drive taxi transit walk
    distance_km: float
    duration_min: int
    cost: float
    note: str = ""
    currency: str = "CNY"


class Route(BaseModel):
    origin: str
    destination: str
    city: str
    straight_km: float
    modes: list[RouteMode]


class WebHit(BaseModel):
    title: str
    snippet: str
    url: str = ""


@dataclass(slots=True)
class Found(Generic[T]):
    """A provider's answer: the records, where they came from, and a note for the model."""

    items: list[T]
    source: str
    note: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    caveats: list[str] = field(default_factory=list)  # what the answer could not know; plans repeat these
