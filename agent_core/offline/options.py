"""Tool results read into the few facts the planner chooses by.

The travel tools print `{"source", "note", "query", "matched", "shown", ..., "results": [...]}`
with each result one of the records in tools/travel/models.py (Train, Flight, Hotel, PlaceHit).
Each reader validates the records against those models and keeps what a plan needs, with the
ids exactly as the tool gave them, so the plan cites the tools and the Validator can check it.
A record that does not validate is skipped, never guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tools.travel import models

M = TypeVar("M", bound=BaseModel)

# Places that are not sights: where one arrives, or eats (lunch is not on the schedule).
NOT_SIGHTS = frozenset({"火车站", "机场", "美食", "酒店"})


@dataclass(frozen=True, slots=True)
class Ride:
    kind: str  # "train" | "flight"
    number: str
    origin: str  # station or airport, as the tool named it
    destination: str
    depart: str  # "YYYY-MM-DD HH:MM"
    arrive: str
    price: float  # one traveller, cheapest seat/cabin with seats left
    seat: str | None = None
    airline: str | None = None
    duration_min: int = 0
    seats: tuple[tuple[str, float], ...] = ()  # every class with seats left, (name, price)
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
    category: str = ""
    lat: float | None = None
    lon: float | None = None


def results(data: Any) -> list[dict[str, Any]]:
    """The records of a travel tool's answer (an empty list for errors and other shapes)."""
    items = data.get("results") if isinstance(data, dict) else None
    return [d for d in items if isinstance(d, dict)] if isinstance(items, list) else []


def source_of(data: Any) -> str | None:
    """Where the tool says its answer came from ("sandbox", a live provider's name)."""
    value = data.get("source") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def valid_records(model: type[M], data: Any) -> list[M]:
    """The items of a tool's results that read as `model`; an item that does not is passed over."""
    out = []
    for item in results(data):
        try:
            out.append(model.model_validate(item))
        except ValidationError:
            continue
    return out


def _seats(seats: list[models.Seat]) -> tuple[tuple[str, float], ...]:
    return tuple((s.seat, s.price) for s in seats if s.left > 0)


def read_trains(data: Any, day: str | None = None) -> list[Ride]:
    """Trains with seats left. `day` is accepted for older callers; the records carry full times."""
    rides = []
    for t in valid_records(models.Train, data):
        seats = _seats(t.seats)
        if not seats:
            continue  # sold out
        rides.append(Ride(kind="train", number=t.number, origin=t.from_station, destination=t.to_station,
                          depart=t.depart, arrive=t.arrive, price=min(p for _, p in seats),
                          duration_min=t.duration_min, seats=seats, source_id=t.number))
    return rides


def read_flights(data: Any, day: str | None = None) -> list[Ride]:
    """Flights with seats left. `day` is accepted for older callers; the records carry full times."""
    rides = []
    for f in valid_records(models.Flight, data):
        seats = _seats(f.cabins)
        if f.cabins and not seats:
            continue  # sold out
        price = min(p for _, p in seats) if seats else f.price
        rides.append(Ride(kind="flight", number=f.number, origin=f.from_airport, destination=f.to_airport,
                          depart=f.depart, arrive=f.arrive, price=price, airline=f.airline,
                          duration_min=f.duration_min, seats=seats, source_id=f.number))
    return rides


def read_hotels(data: Any) -> list[Hotel]:
    return [
        Hotel(hotel_id=h.hotel_id, name=h.name, price=h.price, stars=h.stars, rating=h.rating,
              breakfast=h.has_breakfast, distance_m=h.distance_m)
        for h in valid_records(models.Hotel, data)
        if h.rooms_left > 0
    ]


def read_sights(data: Any) -> list[Sight]:
    """Every place the tool returned (stations and eateries included), in the tool's order."""
    return [
        Sight(poi_id=p.poi_id, name=p.name, hours=p.opening_hours, visit_min=p.visit_min or 90,
              price=p.ticket_price or 0.0, city=p.city, category=p.category, lat=p.lat, lon=p.lon)
        for p in valid_records(models.PlaceHit, data)
    ]


def worth_a_visit(places: list[Sight]) -> list[Sight]:
    """The places to put on a sightseeing schedule: no stations, airports or eateries."""
    return [s for s in places if s.category not in NOT_SIGHTS]
