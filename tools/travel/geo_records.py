"""The gazetteer's records: a city, its stations, airports and sights, and a place a name resolved
to (tools.travel.geo.Gazetteer builds and finds them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Station:
    id: str
    name: str
    city_id: str
    lat: float
    lon: float
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Airport:
    iata: str
    name_zh: str
    name_en: str
    city_id: str
    lat: float
    lon: float
    tz: str


@dataclass(frozen=True, slots=True)
class Poi:
    id: str
    city_id: str
    name_zh: str
    name_en: str
    category: str
    lat: float
    lon: float
    hours: str
    visit_min: int
    price: float


@dataclass(frozen=True, slots=True)
class City:
    id: str
    name_zh: str
    name_en: str
    pinyin: str
    province: str
    country: str
    country_code: str
    lat: float
    lon: float
    tz: str
    population: int
    tier: int
    stations: tuple[str, ...]
    airports: tuple[str, ...]

    @property
    def label(self) -> str:
        return f"{self.name_zh} ({self.name_en})"

    @property
    def in_mainland(self) -> bool:
        return self.country_code == "CN"


@dataclass(frozen=True, slots=True)
class Place:
    """Any point a route or a 'near X' search can start from."""

    name: str
    lat: float
    lon: float
    kind: str  # poi | station | airport | city | point
    city_id: str | None
    id: str | None = None


# Words that mean "what is there to see" rather than a place's name.
