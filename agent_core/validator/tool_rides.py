"""Rides as the Validator reads them from train_search and flight_search answers.

The planner's readers (agent_core.offline.options) keep what can be booked now; the Validator
must also find what the tools showed but the planner would not pick, or it would call a plan's
honest ride missing: a train not on sale yet (its fares listed, its seats unknown until the
sale opens), a station the tool shows by its 12306 code, a fare the tool left in a currency it
could not convert. A ride sold out in every class is still not offered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_core.offline.options import Ride, valid_records
from tools.travel import models

PLAN_CURRENCY = "CNY"  # the plan's prices; a fare the tool could not convert is not compared


@dataclass(frozen=True, slots=True)
class ToolRide:
    ride: Ride
    origin_city: str  # the city as the tool named it ("" when the tool did not know it)
    destination_city: str
    fares_known: bool = True  # False: the fare is in another currency, so no CNY price to compare
    sale_opens: str | None = None


def train_rides(data: Any) -> list[ToolRide]:
    rides = []
    for t in valid_records(models.Train, data):
        seats = tuple((s.seat, s.price) for s in t.seats if s.left > 0 or t.sale_opens)
        if not seats:
            continue  # sold out in every class
        ride = Ride(kind="train", number=t.number, origin=t.from_station, destination=t.to_station, depart=t.depart,
                    arrive=t.arrive, price=min(p for _, p in seats), duration_min=t.duration_min, seats=seats,
                    source_id=t.number)
        rides.append(ToolRide(ride, t.from_city, t.to_city, sale_opens=t.sale_opens))
    return rides


def flight_rides(data: Any) -> list[ToolRide]:
    rides = []
    for f in valid_records(models.Flight, data):
        seats = tuple((s.seat, s.price) for s in f.cabins if s.left > 0)
        if f.cabins and not seats:
            continue  # sold out
        known = f.currency == PLAN_CURRENCY and all(s.currency == PLAN_CURRENCY for s in f.cabins)
        ride = Ride(kind="flight", number=f.number, origin=f.from_airport, destination=f.to_airport, depart=f.depart,
                    arrive=f.arrive, price=min(p for _, p in seats) if seats else f.price, airline=f.airline,
                    duration_min=f.duration_min, seats=seats, source_id=f.number)
        rides.append(ToolRide(ride, f.from_city, f.to_city, fares_known=known))
    return rides
