"""Tool results read into the few facts the planner chooses by.

Each reader takes the JSON a travel tool returned and keeps what a plan needs, with the ids
exactly as the tool gave them, so the plan cites the tools and the Validator can check it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Ride:
    kind: str  # "train" | "flight"
    number: str
    origin: str
    destination: str
    depart: str  # "YYYY-MM-DD HH:MM"
    arrive: str
    price: float  # one traveller, chosen seat/cabin
    seat: str | None = None
    airline: str | None = None
    duration_min: int = 0
    seats: tuple[tuple[str, float], ...] = ()  # every seat class on offer, (name, price)
    source_id: str | None = None


@dataclass(frozen=True, slots=True)
class Hotel:
    hotel_id: str
    name: str
    price: float  # per room and night
    stars: int | None = None
    rating: float | None = None
    breakfast: bool | None = None
    distance_m: float | None = None


@dataclass(frozen=True, slots=True)
class Sight:
    poi_id: str
    name: str
    hours: str = ""
    visit_min: int = 120
    price: float = 0.0
    city: str | None = None


def _items(data: Any, *keys: str) -> list[dict[str, Any]]:
    if isinstance(data, list):
        return [d for d in data if isinstance(d, dict)]
    if isinstance(data, dict):
        for key in keys:
            value = data.get(key)
            if isinstance(value, list):
                return [d for d in value if isinstance(d, dict)]
    return []


def _first(d: dict[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if d.get(key) not in (None, ""):
            return d[key]
    return default


def _minutes(text: Any) -> int:
    if isinstance(text, int | float):
        return int(text)
    return 0


def read_trains(data: Any, day: str) -> list[Ride]:
    rides = []
    for t in _items(data, "trains", "results", "items"):
        seats = tuple(
            (str(_first(s, "seat_name", "name", "seat")), float(_first(s, "price", default=0)))
            for s in _items(t, "seats")
            if _first(s, "available", "left", "remaining", default=1) not in (0, False)
        )
        if not seats and _first(t, "price") is not None:
            seats = ((str(_first(t, "seat_name", "seat", default="二等座")), float(t["price"])),)
        if not seats:
            continue
        number = str(_first(t, "train_no", "number", "train_number", "id"))
        rides.append(Ride(
            kind="train", number=number,
            origin=str(_first(t, "depart_station", "from_station", "origin")),
            destination=str(_first(t, "arrive_station", "to_station", "destination")),
            depart=_stamp(_first(t, "depart_time", "depart"), day),
            arrive=_stamp(_first(t, "arrive_time", "arrive"), day),
            price=min(p for _, p in seats), seat=None,
            duration_min=_minutes(_first(t, "duration_min", "duration_minutes")),
            seats=seats, source_id=str(_first(t, "id", "train_no", "number")),
        ))
    return rides


def read_flights(data: Any, day: str) -> list[Ride]:
    rides = []
    for f in _items(data, "flights", "results", "items"):
        price = _first(f, "price", "sale_price", "min_price")
        if price is None:
            continue
        number = str(_first(f, "flight_no", "number", "flight_number", "id"))
        rides.append(Ride(
            kind="flight", number=number,
            origin=str(_first(f, "departure_airport_name", "departure_airport", "from_airport", "origin")),
            destination=str(_first(f, "arrival_airport_name", "arrival_airport", "to_airport", "destination")),
            depart=_stamp(_first(f, "depart_time", "depart"), day),
            arrive=_stamp(_first(f, "arrive_time", "arrive"), day),
            price=float(price), seat=_first(f, "cabin", "seat"), airline=_first(f, "airline_name", "airline"),
            duration_min=_minutes(_first(f, "duration_min", "duration_minutes")),
            source_id=str(_first(f, "id", "flight_no", "number")),
        ))
    return rides


def read_hotels(data: Any) -> list[Hotel]:
    out = []
    for h in _items(data, "hotels", "results", "items"):
        price = _first(h, "price", "price_per_night", "min_price")
        if price is None:
            continue
        breakfast = _first(h, "has_breakfast", "breakfast")
        out.append(Hotel(
            hotel_id=str(_first(h, "hotel_id", "id")), name=str(_first(h, "hotel_name", "name")),
            price=float(price), stars=_first(h, "stars", "star"), rating=_first(h, "rating", "score"),
            breakfast=None if breakfast is None else bool(breakfast),
            distance_m=_first(h, "distance_m", "distance_to_landmark_m", "distance"),
        ))
    return out


def read_sights(data: Any) -> list[Sight]:
    out = []
    for p in _items(data, "pois", "places", "results", "items"):
        out.append(Sight(
            poi_id=str(_first(p, "poi_id", "id")), name=str(_first(p, "name", "name_zh")),
            hours=str(_first(p, "hours", "opening_hours", "open_hours", default="")),
            visit_min=int(_first(p, "visit_min", "typical_visit_min", "visit_minutes", default=120)),
            price=float(_first(p, "price", "ticket_price", "ticket", default=0) or 0),
            city=_first(p, "city", "city_name"),
        ))
    return out


def _stamp(value: Any, day: str) -> str:
    text = str(value or "")
    if len(text) == 5 and text[2] == ":":
        return f"{day} {text}"
    return text[:16].replace("T", " ")
