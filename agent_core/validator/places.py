"""Where the places of a plan are on the map, for the physics of its legs: stations, airports and
sights exactly (by id or exact name), a city by its centre with a wide margin. A name the
gazetteer does not know exactly is not guessed at (a fuzzy match could be in the wrong place and
raise a false alarm): the check then asks the route tool, or leaves the leg alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools.errors import ToolError
from tools.travel.geo import City, Gazetteer, haversine_km, normalize

EXACT_KM = 3.0  # a station, airport or sight: its point and its entrances
CITY_KM = 60.0  # a city by its centre: airports and suburbs lie this far out


@dataclass(frozen=True, slots=True)
class Spot:
    lat: float
    lon: float
    tz: str
    slack_km: float  # how far the real place may lie from this point
    city_id: str

    def km_to(self, other: Spot) -> float:
        return haversine_km(self.lat, self.lon, other.lat, other.lon)


class Locator:
    def __init__(self, gazetteer: Gazetteer) -> None:
        self.g = gazetteer
        self._cache: dict[tuple[str, str | None], Spot | None] = {}
        self._airports = {k: a for a in gazetteer.airports for k in (a.iata.lower(), normalize(a.name_zh), normalize(a.name_en))}

    def city(self, name: str | None) -> City | None:
        if not name:
            return None
        try:
            return self.g.resolve_city(name)
        except ToolError:
            return None

    def spot(self, name: str, city: str | None = None) -> Spot | None:
        key = (name, city)
        if key not in self._cache:
            self._cache[key] = self._find(name.strip(), self.city(city))
        return self._cache[key]

    def _find(self, name: str, city: City | None) -> Spot | None:
        if not name:
            return None
        if (p := self.g.poi(name)) is not None:
            return self._at(p.lat, p.lon, p.city_id, EXACT_KM)
        for candidate in (name, name.removesuffix("站"), name.removesuffix("火车站"), name.removesuffix("高铁站")):
            s = self.g.station(candidate)
            if s is not None and (city is None or s.city_id == city.id):
                return self._at(s.lat, s.lon, s.city_id, EXACT_KM)
        a = self._airports.get(normalize(name))
        if a is not None and (city is None or a.city_id == city.id):
            return Spot(a.lat, a.lon, a.tz, EXACT_KM, a.city_id)
        if city is not None:
            key = normalize(name)
            for p in self.g.pois_in(city):
                if key in (normalize(p.name_zh), normalize(p.name_en)):
                    return self._at(p.lat, p.lon, p.city_id, EXACT_KM)
        whole = self.city(name)
        if whole is not None and (city is None or whole.id == city.id):
            return Spot(whole.lat, whole.lon, whole.tz, CITY_KM, whole.id)
        return None

    def _at(self, lat: float, lon: float, city_id: str, slack: float) -> Spot:
        return Spot(lat, lon, self.g.city(city_id).tz, slack, city_id)

    def city_spot(self, city: str | None) -> Spot | None:
        c = self.city(city)
        return Spot(c.lat, c.lon, c.tz, CITY_KM, c.id) if c is not None else None
