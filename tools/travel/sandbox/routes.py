"""Sandbox routes: road distance from geometry, durations by city traffic, taxi fares by city tariff."""

from __future__ import annotations

from dataclasses import dataclass

from tools.travel.geo import City, Place, haversine_km
from tools.travel.models import Found, Route, RouteMode

NOTE = "sandbox estimate from straight-line distance, typical traffic and the city's taxi tariff"


@dataclass(frozen=True, slots=True)
class Tariff:
    start: float  # flag fall, CNY
    start_km: float
    per_km: float
    long_km: float  # beyond this an empty-return surcharge applies
    long_per_km: float
    per_slow_min: float  # waiting / low-speed charge, CNY per minute of congestion


# Published day tariffs, rounded; other cities use the tier default.
TARIFFS: dict[str, Tariff] = {
    "beijing": Tariff(13, 3, 2.3, 15, 3.45, 0.46),
    "shanghai": Tariff(14, 3, 2.5, 15, 3.6, 0.5),
    "guangzhou": Tariff(12, 3, 2.6, 35, 3.9, 0.4),
    "shenzhen": Tariff(10, 2, 2.7, 25, 3.5, 0.8),
    "xianggang": Tariff(29, 2, 10.5, 9, 7.2, 1.9),
    "tokyo": Tariff(25, 1.1, 19.5, 1000, 19.5, 1.6),
}
_TIER_TARIFF = {1: Tariff(12, 3, 2.4, 15, 3.5, 0.5), 2: Tariff(10, 3, 2.2, 15, 3.3, 0.4), 3: Tariff(8, 3, 1.8, 15, 2.7, 0.3)}
_FOREIGN = Tariff(30, 1.5, 14.0, 1000, 14.0, 1.2)
_URBAN_KMH = {1: 24.0, 2: 28.0, 3: 33.0}


def tariff_for(city: City) -> Tariff:
    if city.id in TARIFFS:
        return TARIFFS[city.id]
    return _TIER_TARIFF[city.tier] if city.country_code in ("CN", "MO", "TW") else _FOREIGN


def taxi_fare(city: City, km: float, minutes: int) -> float:
    t = tariff_for(city)
    fare = t.start + max(0.0, min(km, t.long_km) - t.start_km) * t.per_km
    fare += max(0.0, km - t.long_km) * t.long_per_km
    fare += minutes * 0.25 * t.per_slow_min  # about a quarter of city driving is slow
    return float(round(fare))


def _metro_fare(km: float) -> float:
    steps = [(6, 3), (12, 4), (22, 5), (32, 6)]
    for limit, fare in steps:
        if km <= limit:
            return float(fare)
    return float(6 + int((km - 32) // 20) + 1)


class SandboxRoutes:
    def plan(self, origin: Place, destination: Place, city: City) -> Route:
        straight = haversine_km(origin.lat, origin.lon, destination.lat, destination.lon)
        road = max(0.3, straight * 1.3)
        urban = _URBAN_KMH[city.tier]
        city_part = min(road, 20.0)
        drive_min = max(3, round(city_part / urban * 60 + max(0.0, road - 20.0) / 60 * 60 + 3))
        modes = [
            RouteMode(mode="taxi", distance_km=round(road, 1), duration_min=drive_min,
                      cost=taxi_fare(city, road, drive_min), note="fare at day tariff; nights cost about 20% more"),
            RouteMode(mode="drive", distance_km=round(road, 1), duration_min=drive_min,
                      cost=float(round(road * 0.6)), note="fuel only; parking extra"),
        ]
        if road <= 80:
            metro = city.tier <= 2 or city.country_code not in ("CN",)
            speed, fare = (30.0, _metro_fare(road * 1.1)) if metro else (17.0, 2.0)
            transfers = int(road // 8)
            transit_min = round(8 + road * 1.1 / speed * 60 + transfers * 6 + 5)
            modes.append(RouteMode(mode="transit", distance_km=round(road * 1.1, 1), duration_min=transit_min, cost=fare,
                                   note=("metro" if metro else "bus") + f", about {transfers} transfer(s), walking included"))
        walk_km = straight * 1.25
        if walk_km <= 8:
            modes.append(RouteMode(mode="walk", distance_km=round(walk_km, 1), duration_min=max(1, round(walk_km / 4.8 * 60)), cost=0.0))
        return Route(origin=origin.name, destination=destination.name, city=city.name_zh,
                     straight_km=round(straight, 2), modes=modes)

    async def route(self, origin: Place, destination: Place, city: City) -> Found[Route]:
        return Found([self.plan(origin, destination, city)], "sandbox", NOTE)
