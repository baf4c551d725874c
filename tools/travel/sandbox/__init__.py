"""The offline, deterministic sandbox provider: every capability, plus lookups by id."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from tools.travel.geo import Gazetteer
from tools.travel.models import Flight, Hotel, PlaceHit, Train
from tools.travel.sandbox.flights import SandboxFlights
from tools.travel.sandbox.hotels import SandboxHotels
from tools.travel.sandbox.places import SandboxPlaces
from tools.travel.sandbox.rail import RailNetwork
from tools.travel.sandbox.routes import SandboxRoutes
from tools.travel.sandbox.trains import SandboxTrains
from tools.travel.sandbox.web import SandboxWeb


class SandboxProvider:
    """Holds one of each sandbox capability; `get_*` re-query a single record by its id."""

    def __init__(self, gazetteer: Gazetteer, data_dir: Path | None = None) -> None:
        self.gazetteer = gazetteer
        self.trains = SandboxTrains(gazetteer, RailNetwork.load(gazetteer, data_dir))
        self.flights = SandboxFlights(gazetteer)
        self.hotels = SandboxHotels(gazetteer)
        self.places = SandboxPlaces(gazetteer)
        self.routes = SandboxRoutes()
        self.web = SandboxWeb(data_dir)

    def get_train(self, number: str, day: date, from_station: str | None = None, to_station: str | None = None) -> Train | None:
        return self.trains.get_train(number, day, from_station, to_station)

    def get_flight(self, number: str, day: date, from_airport: str | None = None, to_airport: str | None = None) -> Flight | None:
        return self.flights.get_flight(number, day, from_airport, to_airport)

    def get_hotel(self, hotel_id: str, checkin: date, checkout: date) -> Hotel | None:
        return self.hotels.get_hotel(hotel_id, checkin, checkout)

    def get_poi(self, poi_id: str) -> PlaceHit | None:
        return self.places.get_poi(poi_id)
